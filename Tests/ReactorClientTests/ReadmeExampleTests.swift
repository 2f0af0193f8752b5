import Examples
import Foundation
import Observation
import ReactorClient
import Testing

/// The client article's view model (UsingTheClient.md) is the code in `ReadmeExample.swift`,
/// and it works against a live server.
@Suite struct ReadmeExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theReadmeShowsTheCompiledExample() throws {
        let readme = try String(
            contentsOf: Self.packageRoot.appendingPathComponent(
                "Sources/ReactorClient/ReactorClient.docc/UsingTheClient.md"),
            encoding: .utf8)
        let start = "<!-- swift-client-example:start -->\n```swift\n"
        let startRange = try #require(readme.range(of: start))
        let endRange = try #require(readme.range(of: "```\n<!-- swift-client-example:end -->"))
        let shown = String(readme[startRange.upperBound..<endRange.lowerBound])
        let file = Self.packageRoot.appendingPathComponent("Tests/ReactorClientTests/ReadmeExample.swift")
        // The file's first four lines: the formatter's ignore mark and why, where it comes from,
        // the example reactors' import.
        let compiled = try String(contentsOf: file, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false
        ).dropFirst(4).joined(separator: "\n")
        #expect(shown == compiled, "UsingTheClient.md's Swift client example differs from \(file.path)")
    }

    @MainActor @Test func theViewModelFollowsALiveSession() async throws {
        let server = try LiveServer()
        let session = try await server.client().createSession(reactor: "todo", as: TodoReactor.self)
        let model = TodoListModel(reactor: try await RemoteReactor(session))
        let running = Task { await model.run() }
        try await Self.wait(model, "live") { $0.status == "live" }
        model.add("milk")
        try await Self.wait(model, "milk listed") { $0.items.map(\.title) == ["milk"] }
        model.toggle(model.items[0])
        try await Self.wait(model, "milk done") { $0.items.first?.done == true }
        model.add("  ")
        try await Self.wait(model, "the alert") { $0.alert == "A todo needs a title." }
        running.cancel()
        await running.value
    }

    /// Waits (bounded) until `condition` holds, woken by the model's observation rather than by polling.
    @MainActor static func wait(
        _ model: TodoListModel, _ what: String, until condition: @MainActor (TodoListModel) -> Bool
    ) async throws {
        let changes = Observed(0)
        while true {
            let seen = changes.value
            withObservationTracking {
                _ = (model.items, model.alert, model.status)
            } onChange: {
                changes.update { $0 += 1 }
            }
            if condition(model) { return }
            try await changes.wait(
                "\(what) (items \(model.items), alert \(model.alert ?? "none"), status \(model.status))"
            ) { $0 > seen }
        }
    }
}
