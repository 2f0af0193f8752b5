import Foundation
import Logs
import ReactorServerTesting
import Testing

@testable import SessionService

/// The journal's background thread works only when there is work: an idle journal's thread waits (it woke
/// every `storage.fsyncWindowMilliseconds` before, 20 times a second by default, with nothing to do), and a
/// write still gets its sync within about one window.
@Suite(.offThePool) struct JournalWriterIdleTests {
    static func journal(_ directory: String, fsync: FsyncPolicy) throws -> FileJournal {
        var options = FileJournal.Options(directory: directory)
        options.fsync = fsync
        options.fsyncWindowMilliseconds = 5
        return try FileJournal(options: options, logger: .disabled)
    }

    /// Writes out a new session's first record.
    static func write(_ storage: FileJournal, _ id: String) throws {
        let snapshot = StoredSnapshot(id: id, reactor: "counter", version: 0, lastSeq: 0, stub: false, state: [])
        _ = try #require(storage.create(snapshot, accessTokenHash: nil))
        storage.writer.flush()
    }

    @Test func anIdleJournalsThreadWaitsAndAWriteGetsOneTurnThatSyncsIt() async throws {
        try await withTemporaryDirectory("journal-idle") { directory in
            let storage = try Self.journal(directory, fsync: .batch)
            defer { storage.close() }
            let writer = storage.writer
            try await eventually("the writer's thread to wait for work") { writer.parked.load(ordering: .acquiring) }
            let before = writer.turnsTaken.load(ordering: .acquiring)
            try Self.write(storage, "a")
            try await eventually("a turn to sync the write") {
                writer.turnsTaken.load(ordering: .acquiring) == before + 1 && writer.io.withLock { $0.unsynced.isEmpty }
            }
            try await eventually("the thread to wait again") { writer.parked.load(ordering: .acquiring) }
            #expect(writer.turnsTaken.load(ordering: .acquiring) == before + 1, "one turn for one write")
            // Writes while it waits are gathered into the next turn, and each is synced.
            try Self.write(storage, "b")
            try Self.write(storage, "c")
            try await eventually("the next turn to sync both") {
                writer.io.withLock { $0.unsynced.isEmpty } && writer.parked.load(ordering: .acquiring)
            }
            #expect((before + 2...before + 3).contains(writer.turnsTaken.load(ordering: .acquiring)))
        }
    }

    @Test func withoutBatchSyncsTheThreadWaitsThroughWrites() async throws {
        for fsync in [FsyncPolicy.always, .never] {
            try await withTemporaryDirectory("journal-idle-\(fsync)") { directory in
                let storage = try Self.journal(directory, fsync: fsync)
                defer { storage.close() }
                let writer = storage.writer
                try await eventually("the writer's thread to wait") { writer.parked.load(ordering: .acquiring) }
                let before = writer.turnsTaken.load(ordering: .acquiring)
                for id in ["a", "b", "c"] { try Self.write(storage, id) }
                // `always` synced them before the writes returned; `never` does not sync: nothing to wake for.
                #expect(writer.io.withLock { $0.unsynced.isEmpty })
                #expect(
                    writer.parked.load(ordering: .acquiring) && writer.turnsTaken.load(ordering: .acquiring) == before)
            }
        }
    }
}
