import Foundation
import Logs
import Posix
import Synchronization
import Tokens

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded storage backend: one shared, segmented, append-only journal of checksummed records
/// (snapshots, mutations, forced states, accepted actions, access tokens) in a local folder, and the
/// index of sessions built from it at start.
///
/// Records are appended to an in-memory buffer. A position is durable once the buffer holding it is
/// written with one `write(2)` (group commit), and with `storage.fsync=always` synced: output asks for
/// that right before it leaves (``isDurable(_:)``), so every version a client can see is in the
/// kernel's page cache first, without a network round trip to wait for.
///
/// ```swift
/// let journal = try FileJournal(options: .init(directory: "data"), logger: logger)
/// defer { journal.close() }
/// print(journal.count, "sessions stored")
/// ```
final class FileJournal: StorageBackend {
    /// The largest body of one journal record: the writer refuses larger records, the reader takes a
    /// larger announced length for corruption. A state limit must leave room for a snapshot's
    /// bookkeeping: states up to half of it fit.
    static let maxRecordBytes = JournalRecord.maxBodyBytes
    /// The largest `sessions.maxStateBytes`: a snapshot of a state at the limit, with its bookkeeping,
    /// must fit in one record, or a session the server accepted could not leave memory or come back.
    static let largestStateLimit = JournalRecord.maxBodyBytes / 2
    /// The largest action (its canonical JSON) the journal accepts.
    static let maxActionBytes = JournalRecord.maxActionBytes

    /// Tunables, from the `storage.*` settings.
    struct Options: Sendable {
        var directory: String
        var fsync: FsyncPolicy = .batch
        var fsyncWindowMilliseconds = 50
        /// A segment is closed and a new one started beyond this many bytes.
        var segmentBytes = 64 << 20
        /// Accept records kept alive per session (`sessions.actionLogLimit`): the action log is rebuilt from them.
        var actionLogLimit = 10_000
        /// Bytes of action JSON those accept records may hold per session (`sessions.actionLogBytes`).
        var actionLogBytes = 4 << 20
        /// How much of each session's past is kept for time travel (`storage.historyVersions`, `storage.historyBytes`).
        var history = HistoryLimits()
        /// Reads the journal as it is and never writes it (`reactor-server verify`, beside a server that may
        /// be running on it): no lock taken, nothing created, cut back or erased, no background work.
        var readOnly = false

        init(directory: String) { self.directory = directory }
    }

    struct State {
        /// What the writer has appended and not yet written, and where appends go.
        var buffer = JournalWriter.Buffer()
        var index = JournalIndex()
        var oldestSegment: UInt32 = 1
        /// The length of each closed segment still on disk, by number (compaction weighs them).
        var segmentSizes: [UInt32: Int] = [:]
        /// The position appended when compaction last found no pass due: until more is appended,
        /// it does not plan again.
        var settledAt: UInt64?
        /// Deleted sessions whose records are still to be overwritten, by key.
        var erasures: [UInt32: Erasure] = [:]
        /// Records an erasure was overwriting when the server stopped (found by the start-up scan).
        var unfinishedErasures: [RecordLocation] = []
    }

    let options: Options
    let logger: Logger
    /// The index and the append buffer, under the one lock an append takes.
    let state = JournalStateLock(State())
    /// Appends, group commit, syncing and the failed state (``JournalWriter``).
    let writer: JournalWriter
    let lockFD: Int32
    /// Stored sessions whose latest load failed to read the journal (a transient condition), by id.
    let readFailures = Mutex<[String: String]>([:])
    /// Bytes written, by whom (`/metrics`).
    let metrics = FileJournalMetrics()

    /// Opens (creating) the data directory, recovers the index from the journal, and starts the sync timer.
    init(options: Options, logger: Logger) throws(JournalError) {
        self.options = options
        self.logger = logger
        writer = JournalWriter(options: options, logger: logger, metrics: metrics, state: state)
        if options.readOnly {
            // The server that may run on it holds the lock and writes on; this reader takes what is there.
            do throws(IOError) {
                Posix.close(try Posix.open(options.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
            } catch {
                throw .io(error)
            }
            lockFD = -1
            try recover()
            return
        }
        let lockPath = options.directory + "/LOCK"
        let fd: Int32
        let locked: Bool
        let permissions: (changed: [String], failed: [IOError])
        do throws(IOError) {
            try Posix.makeDirectories(options.directory, mode: JournalFiles.directoryMode)
            permissions = try JournalFiles.tightenPermissions(options.directory)
            fd = try Posix.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, mode: JournalFiles.fileMode)
            do {
                locked = try Posix.tryLock(fd)
            } catch {
                Posix.close(fd)
                throw error.about(lockPath)
            }
        } catch {
            throw .io(error)
        }
        guard locked else {
            Posix.close(fd)
            throw .locked(directory: options.directory, lockFile: lockPath)
        }
        lockFD = fd
        if !permissions.changed.isEmpty {
            logger.notice(
                "made the data directory and the journal readable by this user only (0700, 0600)",
                ["directory": .string(options.directory), "changed": .int(permissions.changed.count)])
        }
        for failure in permissions.failed {
            logger.warning(
                "cannot make a journal file private to this user; others may read it", ["error": .string("\(failure)")])
        }
        // A file-size limit (ulimit -f) must fail a write with EFBIG, not kill the server.
        signal(SIGXFSZ, SIG_IGN)
        try recover()
        writer.start()
    }

    deinit {
        close()
    }

    /// Writes out everything, syncs it, and releases the data directory.
    func close() {
        guard !options.readOnly, writer.close() else { return }
        Posix.close(lockFD)
    }

    func segmentPath(_ segment: UInt32) -> String {
        JournalFiles.segmentPath(options.directory, segment)
    }

    // MARK: appending

    /// Appends one record, updates the index, and returns its position; nil (nothing appended) when its
    /// body would be larger than ``JournalRecord/maxBodyBytes``.
    @discardableResult
    func append(
        kind: RecordKind, key: UInt32, number: UInt64, identity: (id: String, reactor: String)? = nil,
        payload: (inout [UInt8]) -> Void
    ) -> UInt64? {
        state.withLock { state in
            append(&state, kind: kind, key: key, number: number, identity: identity, payload: payload) == nil
                ? nil : state.buffer.appended
        }
    }

    /// Appends a session's own record (accept, state, completion, timer) to the entry of its key, held by its
    /// session log, and returns the record's position; nil when it is larger than a record.
    func append(
        kind: RecordKind, to entry: IndexEntry, key: UInt32, number: UInt64, payload: (inout [UInt8]) -> Void
    ) -> UInt64? {
        state.withLock { state in
            guard let location = writer.append(&state, kind: kind, key: key, number: number, payload: payload) else {
                return nil
            }
            state.index.apply(kind: kind, to: entry, key: key, number: number, location: location)
            return state.buffer.appended
        }
    }

    /// Appends one record and returns where it will lie; the caller holds the state lock. Its position
    /// is `state.buffer.appended` right after.
    @discardableResult
    func append(
        _ state: inout State, kind: RecordKind, key: UInt32, number: UInt64,
        identity: (id: String, reactor: String)?, accessToken: SessionTokenHash? = nil, payload: (inout [UInt8]) -> Void
    ) -> RecordLocation? {
        guard let location = writer.append(&state, kind: kind, key: key, number: number, payload: payload) else {
            return nil
        }
        state.index.apply(
            kind: kind, key: key, number: number, location: location, identity: identity, accessToken: accessToken)
        return location
    }

    // MARK: group commit (the writer's)

    var appendedPosition: UInt64 { writer.appendedPosition }

    func isDurable(_ position: UInt64) -> Bool { writer.isDurable(position) }

    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) { writer.whenDurable(position, wake) }

    /// Writes every record appended before the call.
    func flush() { writer.flush() }

    /// Writes and fdatasyncs everything appended so far (shutdown, before deleting a segment).
    func sync() { writer.sync() }

    /// Writes the buffer out once it holds more than 4 MiB (checkpoints, compaction's copies).
    func flushIfLarge() { writer.flushIfLarge() }

    /// Why the journal cannot be written right now; nil when it can.
    var unavailableReason: String? { writer.unavailableReason }

    /// Adds the journal's bytes written, compaction's share, and what its segments hold.
    func renderMetrics(into text: inout PrometheusText) {
        let disk = state.withLock { state in
            let open = state.buffer.segmentLength > 0 ? 1 : 0
            return (
                state.segmentSizes.count + open, state.segmentSizes.values.reduce(0, +) + state.buffer.segmentLength
            )
        }
        metrics.render(into: &text, disk: disk)
    }
}
