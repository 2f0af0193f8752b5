import Foundation
import Reactors
import SessionService
import Testing

/// The action log keeps what each action decoded to, the same in memory and after a restart.
@Suite struct ActionLogJournalTests {
    /// Counts notes; the text is in the action only, so the state stays small.
    struct NoteReactor: Reactor {
        enum Action: Codable, Sendable { case note(text: String) }
        struct State: Codable, Sendable { var notes = 0 }
        let initialState = State()
        func reduce(state: State, mutation: Action) -> State { State(notes: state.notes + 1) }
    }

    static func server(_ directory: String, _ configure: @escaping (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try DurabilityTests.server(directory, configure) { $0.register("notes") { NoteReactor() } }
    }

    /// Every entry of the admin action log, read `pageSize` at a time through `since` and `next`.
    static func pagedLog(_ server: TestServer, _ id: String, pageSize: Int) throws -> [[String: Any]] {
        var entries: [[String: Any]] = []
        var since = 0
        for _ in 0..<10_000 {
            let page = try server.request("GET", "/admin/sessions/\(id)/actions?since=\(since)&limit=\(pageSize)", headers: server.admin).json()
            let actions = try #require(page["actions"] as? [[String: Any]])
            entries += actions
            guard let next = page["next"] as? Int else { return entries }
            #expect(next == actions.last?["seq"] as? Int)
            since = next
        }
        throw TestConnection.Failure(description: "paging never ended")
    }

    @Test func theLogKeepsWhatTheActionDecodedTo() throws {
        let directory = DurabilityTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let padding = String(repeating: "p", count: 100_000)
        do {
            let server = try Self.server(directory)
            _ = try server.createSession("todo", id: "tidy")
            let body = #"{ "title" : "milk", "type":"add", "unknown": "\#(padding)", "more": [1, 2, {"x": null}] }"#
            #expect(try server.request("POST", "/sessions/tidy/actions?wait=true", body: body).status == 200)
            #expect(try server.request("POST", "/sessions/tidy/actions?wait=true", body: #"{"type":"toggle","id":1,"junk":"\#(padding)"}"#).status == 200)
            let log = try Self.pagedLog(server, "tidy", pageSize: 10)
            #expect(log.map { try? JSONSerialization.data(withJSONObject: $0["action"] as Any, options: .sortedKeys) }.map { $0.map { String(decoding: $0, as: UTF8.self) } } == [#"{"title":"milk","type":"add"}"#, #"{"id":1,"type":"toggle"}"#])
        }
        // Nothing of the padding reached the journal.
        let journal = try DurabilityTests.segments(directory).reduce(0) { $0 + (try JournalDamageTests.bytes($1)).count }
        #expect(journal < 10_000, "the journal holds \(journal) bytes")
        let server = try Self.server(directory)
        let raw = try server.request("GET", "/admin/sessions/tidy/actions", headers: server.admin).text
        #expect(raw.contains(#""action":{"type":"add","title":"milk"}"#), "\(raw)")
        #expect(raw.contains(#""action":{"type":"toggle","id":1}"#), "\(raw)")
    }
}
