import Foundation
import ReactorServerTesting
import Reactors
import SessionService
import Testing

/// The action log keeps what each action decoded to, capped by bytes as well as entries, the same in
/// memory, after compaction's chunked checkpoints and after a restart, and pages exactly.
@Suite(.offThePool) struct ActionLogJournalTests {
    /// Counts notes; the text is in the action only, so the state stays small.
    struct NoteReactor: Reactor {
        enum Action: Codable, Sendable { case note(text: String) }
        struct State: Codable, Sendable { var notes = 0 }
        let initialState = State()
        func reduce(state: State, mutation: Action) -> State { State(notes: state.notes + 1) }
    }

    static func server(_ directory: String, _ configure: @escaping (inout ServerConfiguration) -> Void = { _ in })
        throws -> TestServer
    {
        try TestServer(dataDirectory: directory, configure: configure) { $0.register("notes") { NoteReactor() } }
    }

    /// Every entry of the admin action log, read `pageSize` at a time through `since` and `next`.
    static func pagedLog(_ server: TestServer, _ id: String, pageSize: Int) throws -> [[String: Any]] {
        var entries: [[String: Any]] = []
        var since = 0
        for _ in 0..<10_000 {
            let page = try server.request(
                "GET", "/admin/sessions/\(id)/actions?since=\(since)&limit=\(pageSize)", headers: server.admin
            ).json()
            let actions = try #require(page["actions"] as? [[String: Any]])
            entries += actions
            guard let next = page["next"] as? Int else { return entries }
            #expect(next == actions.last?["seq"] as? Int)
            since = next
        }
        throw TestFailure("paging never ended")
    }

    @Test func theLogKeepsWhatTheActionDecodedTo() throws {
        try withTemporaryDirectory("actionlogjournal") { directory in
            let padding = String(repeating: "p", count: 100_000)
            do {
                let server = try Self.server(directory)
                _ = try server.createSession("todo", id: "tidy")
                let body = #"{ "title" : "milk", "type":"add", "unknown": "\#(padding)", "more": [1, 2, {"x": null}] }"#
                #expect(try server.request("POST", "/sessions/tidy/actions?wait=true", body: body).status == 200)
                #expect(
                    try server.request(
                        "POST", "/sessions/tidy/actions?wait=true",
                        body: #"{"type":"toggle","id":1,"junk":"\#(padding)"}"#
                    ).status == 200)
                let log = try Self.pagedLog(server, "tidy", pageSize: 10)
                #expect(
                    log.map { try? JSONSerialization.data(withJSONObject: $0["action"] as Any, options: .sortedKeys) }
                        .map { $0.map { String(decoding: $0, as: UTF8.self) } } == [
                            #"{"title":"milk","type":"add"}"#, #"{"id":1,"type":"toggle"}"#,
                        ])
            }
            // Nothing of the padding reached the journal.
            let journal = try DurabilityTests.segments(directory).reduce(0) {
                $0 + (try JournalDamageTests.bytes($1)).count
            }
            #expect(journal < 10_000, "the journal holds \(journal) bytes")
            let server = try Self.server(directory)
            let raw = try server.request("GET", "/admin/sessions/tidy/actions", headers: server.admin).text
            #expect(raw.contains(#""action":{"type":"add","title":"milk"}"#), "\(raw)")
            #expect(raw.contains(#""action":{"type":"toggle","id":1}"#), "\(raw)")
        }
    }

    /// Sizes of the notes sent: about 100 KB each, uneven.
    static let sizes = (1...40).map { 90_000 + ($0 * 7_919) % 25_000 }
    static let byteLimit = 2_600_000

    /// The seqs the log must hold: the newest notes whose JSON fits `byteLimit` together.
    static func expectedSeqs(overhead: Int) -> [Int] {
        var kept: [Int] = []
        var total = 0
        for (index, size) in sizes.enumerated().reversed() {
            guard total + size + overhead <= byteLimit else { break }
            kept.insert(index + 1, at: 0)
            total += size + overhead
        }
        return kept
    }

    @Test func theByteCapHoldsThroughCheckpointsCompactionAndRestarts() throws {
        try withTemporaryDirectory("actionlogjournal") { directory in
            // No time-travel history: each note's mutation holds its text, and this is about the action log.
            let configure: (inout ServerConfiguration) -> Void = {
                $0.sessions.actionLogBytes = Self.byteLimit
                $0.storage.segmentBytes = 1 << 20
                $0.storage.historyVersions = 0
            }
            // {"type":"note","text":"…"}: 25 bytes around the text.
            let expected = Self.expectedSeqs(overhead: 25)
            #expect(expected.count > 15 && expected.count < 40)
            func check(_ server: TestServer, _ when: String) throws {
                for pageSize in [1, 4, 7, 100] {
                    let log = try Self.pagedLog(server, "notes", pageSize: pageSize)
                    #expect(log.compactMap { $0["seq"] as? Int } == expected, "\(when), pages of \(pageSize)")
                    let texts = log.compactMap { ($0["action"] as? [String: Any])?["text"] as? String }
                    #expect(texts.map(\.count) == expected.map { Self.sizes[$0 - 1] }, "\(when)")
                }
            }
            do {
                let server = try Self.server(directory, configure)
                _ = try server.createSession("notes", id: "notes")
                let connection = try server.connect()
                for (index, size) in Self.sizes.enumerated() {
                    let text = String(repeating: Character(UnicodeScalar(97 + index % 26)!), count: size)
                    let body = #"{"type":"note","text":"\#(text)"}"#
                    #expect(try connection.request("POST", "/sessions/notes/actions", body: body).status == 202)
                }
                try check(server, "in memory")
                // The session is resident: compaction has it write a checkpoint (several chunks of ~1 MiB).
                try server.compact()
                #expect(!(try DurabilityTests.segments(directory).contains { $0.hasSuffix("journal-0000000001.log") }))
                try check(server, "after a checkpoint")
            }
            do {
                let server = try Self.server(directory, configure)
                try check(server, "after a restart")
                // Out of memory, another session's writes close segments; compaction copies this one forward
                // once they hold more than twice what both sessions retain (about 5 MB).
                #expect(server.server.service.store.passivate(idleBefore: .max) == 1)
                _ = try server.createSession("notes", id: "other")
                let connection = try server.connect()
                for _ in 0..<60 {
                    #expect(
                        try connection.request(
                            "POST", "/sessions/other/actions",
                            body: #"{"type":"note","text":"\#(String(repeating: "o", count: 100_000))"}"#
                        ).status == 202)
                }
                let before = try DurabilityTests.segments(directory)
                try server.compact()
                #expect(Set(before).subtracting(try DurabilityTests.segments(directory)).count > 0)
                try check(server, "after compaction copied it forward")
            }
            let server = try Self.server(directory, configure)
            try check(server, "after another restart")
            let next = try server.request("POST", "/sessions/notes/actions", body: #"{"type":"note","text":"last"}"#)
                .json()
            #expect(next["seq"] as? Int == Self.sizes.count + 1)
        }
    }
}
