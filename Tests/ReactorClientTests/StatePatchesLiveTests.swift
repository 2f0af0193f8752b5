import Examples
import Foundation
import ReactorClient
import ReactorsTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client against a live server's patches: after the first state every version comes as a patch (the server's
/// `reactor_state_patches_total` counts them), and the states the client builds from them are the ones the actions
/// reduced to, on one session's stream, with `select`, and on the multiplexed stream.
@Suite struct StatePatchesLiveTests {
    /// Every kind of todo action, the list growing and shrinking.
    static let actions: [TodoReactor.Action] = [
        .add(title: "milk"), .add(title: "bread"), .add(title: "tea"), .toggle(id: 2), .remove(id: 1), .toggle(id: 99),
        .add(title: "jam"), .toggle(id: 3), .toggle(id: 2), .clearCompleted, .add(title: "a/b ~ \"q\""), .toggle(id: 4),
    ]

    /// The server's count of patches made.
    static func patchesMade(_ server: LiveServer) async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: server.baseURL.appending(path: "metrics"))
        let text = String(decoding: data, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("reactor_state_patches_total ") }
        return try #require(line.flatMap { Int($0.split(separator: " ")[1]) }, "no reactor_state_patches_total")
    }

    @Test func theStatesBuiltFromPatchesAreTheOnesTheActionsReducedTo() async throws {
        let server = try LiveServer()
        let todo = try await server.client().createSession(reactor: "todo", as: TodoReactor.self)
        let recorder = SequenceRecorder(throwing: todo.states())
        try await recorder.wait("the first state") { $0.count == 1 }
        let before = try await Self.patchesMade(server)
        var reduced: [VersionedState<TodoReactor.State>] = []
        for action in Self.actions { reduced.append(try await todo.sendAndWait(action).reduced) }
        try await recorder.wait("every version") { $0.count == 1 + Self.actions.count }
        #expect(Array(recorder.elements.dropFirst()) == reduced)
        #expect(try await Self.patchesMade(server) - before == Self.actions.count, "one patch per version")
    }

    @Test func aSelectedValueIsPatchedToo() async throws {
        let server = try LiveServer()
        let todo = try await server.client().createSession(reactor: "todo", as: TodoReactor.self)
        let recorder = SequenceRecorder(todo.events(select: "/items", as: [TodoReactor.Item].self))
        try await recorder.wait("the first value") { $0.count == 3 }
        var expected: [String] = []
        var items = "[]"
        for action in Self.actions {
            let result = try await todo.sendAndWait(action).reduced
            // Versions that leave the items alone (an alert) send nothing.
            guard json(result.state.items) != items else { continue }
            items = json(result.state.items)
            expected.append("state \(result.version) \(items)")
        }
        let changes = expected.count
        try await recorder.wait("every change of the items") { $0.count == 3 + changes }
        #expect(Array(recorder.elements.map(describe).dropFirst(3)) == expected)
    }

    @Test func theMultiplexedStreamBuildsEachSessionsStates() async throws {
        let server = try LiveServer()
        let client = server.client()
        let left = try await client.createSession(reactor: "todo", as: TodoReactor.self, id: "left")
        let right = try await client.createSession(reactor: "todo", as: TodoReactor.self, id: "right")
        let recorder = SequenceRecorder(client.events(for: [left.access, right.access]))
        try await recorder.wait("both first states") { $0.count == 4 }
        var expected: [String] = []
        for (index, action) in Self.actions.enumerated() {
            let session = index.isMultiple(of: 2) ? left : right
            let result = try await session.sendAndWait(action).reduced
            expected.append("\(session.id): state \(result.version) \(json(result.state))")
        }
        let versions = expected.count
        try await recorder.wait("every version") { elements in
            elements.filter { if case .state = $0 { true } else { false } }.count == 2 + versions
        }
        let states = recorder.elements.dropFirst(4).compactMap { element -> String? in
            guard case .state(let session, let update) = element else { return nil }
            let decoded = try? update.decoded(as: TodoReactor.State.self)
            return "\(session): state \(update.version) \(decoded.map { json($0.state) } ?? "?")"
        }
        #expect(states == expected)
    }
}
