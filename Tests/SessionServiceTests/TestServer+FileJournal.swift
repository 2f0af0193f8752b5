import ReactorServerTesting
import Testing

@testable import SessionService

/// White-box access to the file journal of a ``TestServer`` started on a data directory, for the
/// tests of what only the file backend has (segments, compaction, erasure).
extension TestServer {
    /// The server's file journal.
    var fileJournal: FileJournal {
        get throws {
            try #require(server.storage as? FileJournal, "the server does not store sessions in a file journal")
        }
    }

    /// Compacts the journal now, asking this server's resident sessions for checkpoints as the
    /// maintenance tick does.
    func compact() throws {
        try fileJournal.compact(server.service.store)
    }

    /// Writes out everything the journal buffers, so the files show it.
    func flushJournal() throws {
        try fileJournal.flush()
    }

    /// Writes out and syncs everything the journal buffers.
    func syncJournal() throws {
        try fileJournal.sync()
    }

    /// Erases deleted sessions' records now, as the maintenance tick does.
    func eraseDeletedSessions() throws {
        try fileJournal.eraseDeletedSessions()
    }

    /// Whether the stored session `id` is in memory (nil when it is not stored).
    func isResident(_ id: String) -> Bool? {
        server.storage?.storedSession(id)?.resident
    }
}
