import Foundation
import HostedExamples
import Testing

@testable import SessionService

/// The documentation says what the code does: the configuration and route tables of the SessionService catalog
/// are checked against the schema and the router, and the README opens with the two commands.
@Suite struct ReadmeTests {
    static var readme: String {
        get throws {
            try String(
                contentsOf: ConfigurationLoaderTests.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        }
    }

    /// An article of the SessionService catalog.
    static func article(_ name: String) throws -> String {
        try String(
            contentsOf: ConfigurationLoaderTests.packageRoot.appendingPathComponent(
                "Sources/SessionService/SessionService.docc/\(name).md"),
            encoding: .utf8)
    }

    @Test func configurationReferenceMatchesTheSchema() throws {
        let table = ExampleCatalog.configurationSchema.markdownTable()
        #expect(
            try Self.article("Configuration").contains(table),
            "replace the table of SessionService.docc/Configuration.md with:\n\(table)")
    }

    @Test func routeTableListsEveryRoute() throws {
        let api = try Self.article("HTTPAPI")
        for entry in Route.table {
            #expect(
                api.contains("| `\(entry.method) \(entry.pattern)` |"),
                "the route table of SessionService.docc/HTTPAPI.md lacks \(entry.method) \(entry.pattern)")
        }
    }

    @Test func opensWithTheTwoCommands() throws {
        let readme = try Self.readme
        let firstBlock = try #require(
            readme.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(firstBlock.contains("swift run reactor-server"))
        #expect(firstBlock.contains("swift build --build-tests && swift test"))
    }
}
