import Foundation
import Testing

/// The README's tester example is the code in `ReadmeTesterExample.swift`, whose tests run with this suite's.
@Suite struct ReadmeTesterExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theReadmeShowsTheCompiledExample() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let startRange = try #require(readme.range(of: "<!-- reactor-tester-example:start -->\n```swift\n"))
        let endRange = try #require(readme.range(of: "```\n<!-- reactor-tester-example:end -->"))
        let shown = String(readme[startRange.upperBound..<endRange.lowerBound])
        let file = Self.packageRoot.appendingPathComponent("Tests/ExamplesTests/ReadmeTesterExample.swift")
        // The file's first four lines: the formatter's ignore mark and why, where it comes from, a blank line.
        let compiled = try String(contentsOf: file, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false
        )
        .dropFirst(4).joined(separator: "\n")
        #expect(shown == compiled, "README.md's ReactorTester example differs from \(file.path)")
    }
}
