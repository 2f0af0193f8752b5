import Foundation
import Testing

/// Every Swift snippet of the README and the DocC catalogs compiles: each appears, line for line (indentation
/// aside), in a Swift file the package builds (`Tests/DocSnippets`, the examples' tests, the client's tests). A
/// `Package.swift` fragment names only products the package has. A snippet that cannot compile here says why
/// in a `<!-- snippet not compiled: … -->` line right above it.
@Suite struct DocSnippetsTests {
    static let root = ConfigurationLoaderTests.packageRoot

    /// README.md and every article of every catalog.
    static func documents() throws -> [URL] {
        var documents = [root.appendingPathComponent("README.md")]
        let sources = root.appendingPathComponent("Sources")
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "md", url.path.contains(".docc/") { documents.append(url) }
        }
        return documents
    }

    /// The Swift blocks of `text`, each with the line above its fence.
    static func swiftBlocks(_ text: String) -> [(above: String, code: String)] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [(String, String)] = []
        var index = 0
        while index < lines.count {
            if lines[index] == "```swift" {
                let above = index > 0 ? lines[index - 1] : ""
                var end = index + 1
                while end < lines.count, lines[end] != "```" { end += 1 }
                blocks.append((above, lines[(index + 1)..<end].joined(separator: "\n")))
                index = end
            }
            index += 1
        }
        return blocks
    }

    /// The lines of `text` without their indentation, blank ones left out.
    static func significantLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").map { $0.drop { $0 == " " } }.filter { !$0.isEmpty }
    }

    /// The significant lines of every Swift file under Tests/ that the package compiles.
    static func compiledFiles() throws -> [(path: String, lines: [Substring])] {
        var files: [(String, [Substring])] = []
        let tests = root.appendingPathComponent("Tests")
        let enumerator = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            files.append((url.path, significantLines(try String(contentsOf: url, encoding: .utf8))))
        }
        return files
    }

    static func contains(_ haystack: [Substring], _ needle: [Substring]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }

    @Test func everySwiftSnippetIsCompiledAsShown() throws {
        let files = try Self.compiledFiles()
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var checked = 0
        for document in try Self.documents() {
            let name = document.path.replacingOccurrences(of: Self.root.path + "/", with: "")
            for block in Self.swiftBlocks(try String(contentsOf: document, encoding: .utf8)) {
                checked += 1
                if block.above.hasPrefix("<!-- snippet not compiled: ") {
                    #expect(block.above.count > 40, "\(name): say why the snippet is not compiled")
                    continue
                }
                if block.code.contains(".product(name:") {
                    // A manifest fragment: every product it names is one of ours.
                    let products = block.code.matches(of: /\.product\(name: "([^"]+)", package: "reactor-server"\)/)
                    #expect(!products.isEmpty, "\(name): a manifest fragment naming no product of this package")
                    for product in products {
                        #expect(
                            manifest.contains(".library(name: \"\(product.1)\""),
                            "\(name): Package.swift has no library product \(product.1)")
                    }
                    continue
                }
                let lines = Self.significantLines(block.code)
                #expect(
                    files.contains { Self.contains($0.lines, lines) },
                    """
                    \(name): this snippet is not compiled anywhere under Tests/ (put it in Tests/DocSnippets):
                    \(block.code)
                    """
                )
            }
        }
        #expect(checked >= 10, "the documents hold the snippets this test was written for")
    }
}
