import Foundation
import Logs
import ReactorServerTesting
import Reactors
import Testing

@testable import SessionService

/// One record limit for writer and reader: a record exactly at it is written, survives compaction's
/// copy and a restart; one byte more is refused before anything of it is written.
@Suite(.offThePool) struct RecordLimitTests {
    static func storage(_ directory: String, logs: RecordingLogHandler = RecordingLogHandler()) throws -> FileJournal {
        var options = FileJournal.Options(directory: directory)
        options.segmentBytes = 4096
        options.actionLogBytes = 1 << 30
        return try FileJournal(options: options, logger: Logger(label: "storage", level: .debug, handler: logs))
    }

    @Test func aRecordOneByteOverTheLimitIsNeverWritten() {
        let payload = [UInt8](repeating: 0x20, count: JournalRecord.maxBodyBytes - JournalRecord.headerBytes + 1)
        var buffer: [UInt8] = [1, 2, 3]
        let fits = JournalRecord.append(kind: .mutation, key: 1, number: 1, to: &buffer) {
            $0.append(contentsOf: payload.dropLast())
        }
        #expect(fits)
        #expect(buffer.count == 3 + JournalRecord.frameBytes + JournalRecord.maxBodyBytes)
        buffer = [1, 2, 3]
        let refused = JournalRecord.append(kind: .mutation, key: 1, number: 1, to: &buffer) {
            $0.append(contentsOf: payload)
        }
        #expect(!refused)
        #expect(buffer == [1, 2, 3])
    }

    /// The largest action the journal accepts fills an action-log chunk exactly to the record limit
    /// when compaction copies it forward; it reads back whole after a restart.
    @Test func anActionAtTheLimitSurvivesCompactionAndARestart() throws {
        try withTemporaryDirectory("recordlimit") { directory in
            var action = [UInt8](repeating: UInt8(ascii: "a"), count: FileJournal.maxActionBytes)
            action[0] = UInt8(ascii: "{")
            action[action.count - 1] = UInt8(ascii: "}")
            do {
                let storage = try Self.storage(directory)
                let snapshot = StoredSnapshot(
                    id: "big", reactor: "notes", version: 0, lastSeq: 0, stub: false, state: Array("{}".utf8))
                let log = try #require(storage.create(snapshot, accessTokenHash: nil))
                let journal = SessionJournal(
                    log: log, id: "big", reactor: "notes", storageVersion: 1, snapshotEvery: 1000, logger: .disabled)
                let ticket = ActionTicket(journal: journal)
                ticket.done = true
                journal.accepted(ticket, seq: 1, at: 7, stubbed: false, body: action)
                #expect(
                    journal.snapshot(version: 0, lastSeq: 1, stub: false, state: Array("{}".utf8), oldestRetained: 1))
                journal.release()
                // Another session's records close the segments that hold it. A pass would copy it forward only
                // with twice its size of dead records to free (256 MiB more here): the copy is made as that
                // pass makes it, and compaction then deletes the segments of the originals.
                let other = try #require(
                    storage.create(
                        StoredSnapshot(
                            id: "other", reactor: "notes", version: 0, lastSeq: 0, stub: false,
                            state: Array("{}".utf8)),
                        accessTokenHash: nil))
                for version in UInt64(1)...200 {
                    _ = other.appendMutation(
                        Array(#"{"type":"note","text":"x"}"#.utf8), version: version, storageVersion: 1)
                }
                storage.flush()
                let before = try JournalFiles.segmentNumbers(directory)
                storage.copyForward([try #require(storage.key(for: "big"))])
                storage.compact(NoResidentSessions())
                #expect(try JournalFiles.segmentNumbers(directory).first! > before.first!, "compaction deleted nothing")
                storage.close()
            }
            // Every record on disk, the chunk at exactly the limit among them, reads back.
            var largest = 0
            for segment in try JournalFiles.segmentNumbers(directory) {
                let bytes = try JournalFiles.readAll(JournalFiles.segmentPath(directory, segment))
                let records = JournalDamageTests.records(bytes)
                #expect((records.last.map { $0.offset + $0.size } ?? 0) == bytes.count)
                largest = max(largest, records.map(\.size).max() ?? 0)
            }
            #expect(largest == JournalRecord.frameBytes + JournalRecord.maxBodyBytes)
            let logs = RecordingLogHandler()
            let storage = try Self.storage(directory, logs: logs)
            defer { storage.close() }
            #expect(logs.records.allSatisfy { $0.level < .warning }, "\(logs.records.map(\.message))")
            guard case .loaded(let history, _) = storage.load("big") else {
                Issue.record("the session did not load back")
                return
            }
            #expect(history.actions.map(\.seq) == [1])
            #expect(history.actions.first?.action == action)
        }
    }

    /// An action whose JSON, as it decodes, is `size` bytes: `{"type":"blob","size":N}` decodes to a
    /// text that fills `{"type":"blob","text":"…"}` to N bytes. (A body larger than the JSON reader's
    /// document limit never decodes at all, so this is how an action reaches the journal's limit.)
    struct BlobReactor: Reactor {
        struct Action: Codable, Sendable {
            var text: String

            enum Keys: String, CodingKey { case type, size, text }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: Keys.self)
                guard try container.decode(String.self, forKey: .type) == "blob" else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .type, in: container, debugDescription: "unknown type")
                }
                // As encoded (the journal's mutation), or as clients send it.
                if let text = try container.decodeIfPresent(String.self, forKey: .text) {
                    self.text = text
                } else {
                    text = String(repeating: "x", count: max(0, try container.decode(Int.self, forKey: .size) - 25))
                }
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode("blob", forKey: .type)
                try container.encode(text, forKey: .text)
            }
        }
        struct State: Codable, Sendable { var blobs = 0, bytes = 0 }
        let initialState = State()
        func reduce(state: State, mutation: Action) -> State {
            State(blobs: state.blobs + 1, bytes: state.bytes + mutation.text.utf8.count)
        }
    }

    /// Through HTTP: an action of exactly the largest size is accepted, and its mutation (as large) is
    /// replayed after a restart; one byte more is refused with 413 and nothing of it is journaled.
    @Test func anActionAtTheLimitIsKeptAndOneByteMoreIsRefused() throws {
        try withTemporaryDirectory("recordlimit") { directory in
            let configure: (inout ServerConfiguration) -> Void = { $0.sessions.actionLogBytes = 1 << 30 }
            let catalog: (inout ReactorCatalog) -> Void = { $0.register("blob") { BlobReactor() } }
            let largest = FileJournal.maxActionBytes
            // Each answer encodes, journals or replays 128 MiB: in a debug build on a loaded machine
            // (a full run building a release binary beside it) that took over the default 30 s.
            let bound = Duration.seconds(300)
            do {
                let server = try TestServer(dataDirectory: directory, configure: configure, catalog: catalog)
                _ = try server.createSession("blob", id: "big")
                #expect(
                    try server.connect(readTimeout: bound).request(
                        "POST", "/sessions/big/actions?wait=true", body: #"{"type":"blob","size":\#(largest)}"#
                    ).status == 200)
                try server.syncJournal()
                let journal = try CompactionTests.diskBytes(directory)
                let refused = try server.connect(readTimeout: bound).request(
                    "POST", "/sessions/big/actions", body: #"{"type":"blob","size":\#(largest + 1)}"#)
                #expect(refused.status == 413)
                #expect(refused.errorCode == "action_too_large")
                #expect(refused.errorMessage?.contains("\(largest)") == true)
                try server.syncJournal()
                #expect(try CompactionTests.diskBytes(directory) == journal, "the refused action reached the journal")
                // No snapshot after it: the restart replays its journaled mutation, as large as the action.
            }
            let server = try TestServer(dataDirectory: directory, configure: configure, catalog: catalog)
            let reloaded = try server.connect(readTimeout: bound).request("GET", "/sessions/big")
            let session = try reloaded.json()
            #expect(reloaded.status == 200, "\(reloaded.text.prefix(500))")
            #expect(session["version"] as? Int == 1)
            #expect((session["state"] as? [String: Any])?["bytes"] as? Int == largest - 25)
            // The next action is seq 2: the refused one took no seq; the log holds both accepted actions.
            #expect(
                try server.connect(readTimeout: bound).request(
                    "POST", "/sessions/big/actions?wait=true", body: #"{"type":"blob","size":30}"#
                ).json()["seq"] as? Int == 2)
            let tail = try server.connect(readTimeout: bound).request(
                "GET", "/admin/sessions/big/actions?since=1", headers: server.admin
            ).json()
            #expect((tail["actions"] as? [[String: Any]])?.map { $0["seq"] as? Int } == [2])
            let head = try server.connect(readTimeout: bound)
            try head.send(
                "GET /admin/sessions/big/actions?limit=1 HTTP/1.1\r\nHost: test\r\n"
                    + "Authorization: Bearer \(TestServer.adminToken)\r\n\r\n"
            )
            let response = try head.readResponse()
            #expect(response.status == 200)
            #expect(response.body.count > largest, "the first entry holds the whole action")
        }
    }
}

/// No session is in memory: compaction copies every stored session forward itself.
struct NoResidentSessions: ResidentSessions {
    func writeCheckpoints(_ ids: [String]) {}
}
