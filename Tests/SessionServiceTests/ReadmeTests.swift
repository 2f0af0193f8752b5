import Foundation
import HostedExamples
import Testing

@testable import SessionService

/// The README documents what the code does: its configuration table and route table are checked
/// against the schema and the router.
@Suite struct ReadmeTests {
    static var readme: String {
        get throws { try String(contentsOf: ConfigurationLoaderTests.packageRoot.appendingPathComponent("README.md"), encoding: .utf8) }
    }

    @Test func configurationReferenceMatchesTheSchema() throws {
        let table = ExampleCatalog.configurationSchema.markdownTable()
        #expect(try Self.readme.contains(table), "replace the README's configuration table with:\n\(table)")
    }

    @Test func routeTableListsEveryRoute() throws {
        let readme = try Self.readme
        for entry in Route.table {
            #expect(readme.contains("| `\(entry.method) \(entry.pattern)` |"), "README route table lacks \(entry.method) \(entry.pattern)")
        }
    }

    @Test func opensWithTheTwoCommands() throws {
        let readme = try Self.readme
        let firstBlock = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(firstBlock.contains("swift run reactor-server"))
        #expect(firstBlock.contains("swift build --build-tests && swift test"))
    }
}
