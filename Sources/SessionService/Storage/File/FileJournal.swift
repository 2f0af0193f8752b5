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

    struct Chunk {
        var segment: UInt32
        var bytes: [UInt8]
    }

    struct State {
        var chunks: [Chunk] = []
        /// The last written buffer, emptied, for the next chunk: a commit then allocates nothing.
        var spare: [UInt8] = []
        /// The list of chunks last written, emptied: the next write takes it, so appending the first chunk
        /// after a write allocates no list (an allocation and a free per group commit, measured).
        var spareChunks: [Chunk] = []
        var segment: UInt32 = 1
        /// Bytes written plus buffered in the current segment.
        var segmentLength = 0
        var appended: UInt64 = 0
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

    struct IO {
        var fd: Int32 = -1
        var fdSegment: UInt32 = 0
        /// Where the open segment ends, kept here so a failed write is cut back without asking the kernel first.
        var fdEnd = 0
        /// Segments written since the last fdatasync (their descriptors, kept open until synced).
        var unsynced: [UInt32: Int32] = [:]
    }

    /// Why the journal cannot be written, while it cannot: actions are refused meanwhile.
    struct Failure {
        var reason: String
        /// A failed fdatasync: what the page cache holds is unknown, so only a restart clears it.
        var sticky: Bool
    }

    let options: Options
    let logger: Logger
    let state: Mutex<State>
    let io = Mutex(IO())
    /// How many records were appended; read without the lock by the output hook.
    let appended = Atomic<UInt64>(0)
    /// How many appended records are written (and, with `always`, synced).
    let written = Atomic<UInt64>(0)
    let lockFD: Int32
    let syncTimer = Mutex<Bool>(true)
    let failure = Mutex<Failure?>(nil)
    /// Output waiting for positions that are not written yet (while writes fail), woken once they are.
    let waiters = Mutex<[(position: UInt64, wake: @Sendable () -> Void)]>([])
    /// Stored sessions whose latest load failed to read the journal (a transient condition), by id.
    let readFailures = Mutex<[String: String]>([:])
    /// Whether ``failure`` is set; read on every action without the lock.
    let failing = Atomic<Bool>(false)
    /// Bytes written, by whom (`/metrics`).
    let metrics = FileJournalMetrics()

    /// Opens (creating) the data directory, recovers the index from the journal, and starts the sync timer.
    init(options: Options, logger: Logger) throws(JournalError) {
        self.options = options
        self.logger = logger
        if options.readOnly {
            // The server that may run on it holds the lock and writes on; this reader takes what is there.
            do throws(IOError) {
                Posix.close(try Posix.open(options.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
            } catch {
                throw .io(error)
            }
            lockFD = -1
            state = Mutex(State())
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
        state = Mutex(State())
        try recover()
        startBackground()
    }

    deinit {
        close()
    }

    /// Writes out everything, syncs it, and releases the data directory.
    func close() {
        guard !options.readOnly else { return }
        let first = syncTimer.withLock { running -> Bool in
            defer { running = false }
            return running
        }
        guard first else { return }
        flush()
        sync()
        io.withLock { io in
            guard io.fd >= 0 else { return }
            // Every failed write was cut back; check, so a clean stop never leaves part of a record.
            if let size = try? Posix.size(io.fd), size != io.fdEnd {
                logger.warning(
                    "the open journal segment does not end where its last whole record does; cutting it back",
                    ["path": .string(segmentPath(io.fdSegment)), "size": .int(size), "end": .int(io.fdEnd)])
                try? Posix.ftruncate(io.fd, io.fdEnd)
            }
            Posix.close(io.fd)
            io.fd = -1
        }
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
                ? nil : state.appended
        }
    }

    /// Appends one record and returns where it will lie; the caller holds the state lock. Its position
    /// is `state.appended` right after.
    @discardableResult
    func append(
        _ state: inout State, kind: RecordKind, key: UInt32, number: UInt64,
        identity: (id: String, reactor: String)?, accessToken: SessionTokenHash? = nil, payload: (inout [UInt8]) -> Void
    ) -> RecordLocation? {
        if state.segmentLength >= options.segmentBytes {
            state.segmentSizes[state.segment] = state.segmentLength
            state.segment += 1
            state.segmentLength = 0
        }
        if state.chunks.last?.segment != state.segment {
            var bytes: [UInt8] = []
            swap(&bytes, &state.spare)
            if bytes.capacity == 0 { bytes.reserveCapacity(16 * 1024) }
            state.chunks.append(Chunk(segment: state.segment, bytes: bytes))
        }
        let last = state.chunks.count - 1
        let start = state.chunks[last].bytes.count
        guard
            JournalRecord.append(kind: kind, key: key, number: number, to: &state.chunks[last].bytes, payload: payload)
        else {
            logger.error(
                "a journal record larger than the record limit was refused; nothing of it was written",
                ["kind": .string("\(kind)"), "limit_bytes": .int(JournalRecord.maxBodyBytes)])
            return nil
        }
        let length = state.chunks[last].bytes.count - start
        let location = RecordLocation(
            segment: state.segment, offset: UInt32(state.segmentLength), length: UInt32(length))
        state.segmentLength += length
        state.index.apply(
            kind: kind, key: key, number: number, location: location, identity: identity, accessToken: accessToken)
        state.appended += 1
        appended.store(state.appended, ordering: .releasing)
        return location
    }

    // MARK: group commit

    var appendedPosition: UInt64 { appended.load(ordering: .acquiring) }

    /// Cheap when `position` is written; otherwise writes (and with `always` syncs) the buffer, so that
    /// what a response or event is about to show is in the journal first. False while writes fail.
    func isDurable(_ position: UInt64) -> Bool {
        if written.load(ordering: .acquiring) >= position { return true }
        flush()
        return written.load(ordering: .acquiring) >= position
    }

    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        // Made durable now, or (while writes fail) when a retry succeeds: see `writeOut`; woken early
        // once when a write fails (see `fail`).
        if isDurable(position) { return wake() }
        let now = waiters.withLock { waiters -> Bool in
            if written.load(ordering: .acquiring) >= position { return true }
            waiters.append((position, wake))
            return false
        }
        if now { wake() }
    }

    /// Writes every record appended before the call (one `write(2)` per segment touched).
    func flush() {
        let target = appended.load(ordering: .acquiring)
        guard written.load(ordering: .acquiring) < target else { return }
        io.withLock { io in
            guard written.load(ordering: .acquiring) < target else { return }
            writeOut(&io)
        }
    }

    /// Takes the buffer and writes it; caller holds the io lock. When a write fails, the file is cut
    /// back to where the write began and the unwritten chunks go back to the front of the buffer, to
    /// be retried by the next flush (record locations stay valid); actions are refused meanwhile.
    func writeOut(_ io: inout IO) {
        var (chunks, count) = state.withLock { state -> ([Chunk], UInt64) in
            var chunks: [Chunk] = []
            swap(&chunks, &state.spareChunks)
            swap(&chunks, &state.chunks)
            return (chunks, state.appended)
        }
        for (position, chunk) in chunks.enumerated() where !chunk.bytes.isEmpty {
            var start: off_t = -1
            do {
                if io.fdSegment != chunk.segment || io.fd < 0 {
                    if io.fd >= 0 {
                        if options.fsync == .never { Posix.close(io.fd) } else { io.unsynced[io.fdSegment] = io.fd }
                        io.fd = -1
                    }
                    let path = segmentPath(chunk.segment)
                    io.fd = try Posix.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode: JournalFiles.fileMode)
                    io.fdSegment = chunk.segment
                    io.fdEnd = try Posix.size(io.fd)
                    // Best effort, as before: the segment's entry reaches the disk
                    // with the next sync of the folder at the latest.
                    if options.fsync != .never { try? Posix.syncDirectory(options.directory) }
                }
                let fd = io.fd
                start = io.fdEnd
                // A typed-throws closure here crashes the 6.3 compiler; a Result carries the error out.
                let result = chunk.bytes.withUnsafeBytes { bytes in
                    Result { () throws(IOError) in try Posix.writeAll(fd, bytes) }
                }
                // The path is named only for an error message: formatting it cost more than the rest of a commit.
                do { try result.get() } catch { throw error.about(segmentPath(chunk.segment)) }
                io.fdEnd += chunk.bytes.count
                metrics.writtenBytes.increment(by: chunk.bytes.count)
                if options.fsync != .never, io.unsynced[chunk.segment] == nil { io.unsynced[chunk.segment] = -1 }
            } catch {
                let unwritten = Array(chunks[position...])
                state.withLock { $0.chunks.insert(contentsOf: unwritten, at: 0) }
                fail("\(error)", sticky: false)
                if start >= 0 {
                    do {
                        try Posix.ftruncate(io.fd, start)
                    } catch {
                        // The segment may end in part of a record, and an appended retry would follow it
                        // (a damaged frame in the middle): nothing more is written until a restart cuts it off.
                        fail(
                            "cannot cut back a partial write: \(error.about(segmentPath(chunk.segment)))", sticky: true)
                    }
                }
                return
            }
        }
        // With `always`, a position is durable once synced: a failed sync leaves it not durable for good.
        if options.fsync == .always, !syncUnsynced(&io) { return }
        recovered()
        written.store(count, ordering: .releasing)
        wakeWaiters(upTo: count)
        // Keep one written buffer for reuse, unless a burst made it large, and the list, emptied.
        var bytes: [UInt8] = []
        if let last = chunks.indices.last, chunks[last].bytes.capacity <= Self.spareBufferLimit {
            // Taken out of the list, so it is the only reference and empties in place.
            swap(&bytes, &chunks[last].bytes)
            bytes.removeAll(keepingCapacity: true)
        }
        chunks.removeAll(keepingCapacity: chunks.capacity <= Self.spareChunkLimit)
        state.withLock { state in
            if bytes.capacity > 0, state.spare.capacity == 0 { state.spare = bytes }
            if state.spareChunks.capacity == 0 { state.spareChunks = chunks }
        }
    }

    /// Wakes the output waiting for positions up to `position`, now written.
    func wakeWaiters(upTo position: UInt64) {
        let ready = waiters.withLock { waiters -> [@Sendable () -> Void] in
            guard !waiters.isEmpty else { return [] }
            let ready = waiters.filter { $0.position <= position }.map(\.wake)
            waiters.removeAll { $0.position <= position }
            return ready
        }
        for wake in ready { wake() }
    }

    /// Writes the buffer out once it holds more than `threshold` bytes, so streamed work (checkpoints,
    /// compaction's copies) never buffers more than that.
    func flushIfLarge(_ threshold: Int = 4 << 20) {
        if bufferedBytes() > threshold { flush() }
    }

    /// Bytes appended and not yet written.
    func bufferedBytes() -> Int {
        state.withLock { $0.chunks.reduce(0) { $0 + $1.bytes.count } }
    }

    /// The largest written buffer kept for reuse.
    static let spareBufferLimit = 1 << 20
    /// The longest list of chunks kept for the next write (a longer one is given back).
    static let spareChunkLimit = 64

    /// Adds the journal's bytes written, compaction's share, and what its segments hold.
    func renderMetrics(into text: inout PrometheusText) {
        let disk = state.withLock { state in
            let open = state.segmentLength > 0 ? 1 : 0
            return (state.segmentSizes.count + open, state.segmentSizes.values.reduce(0, +) + state.segmentLength)
        }
        metrics.render(into: &text, disk: disk)
    }

    /// Why the journal cannot be written right now; nil when it can.
    var unavailableReason: String? {
        guard failing.load(ordering: .acquiring) else { return nil }
        return failure.withLock { $0?.reason }
    }

    /// Enters the failed state (logged once per failure, not per retry).
    func fail(_ reason: String, sticky: Bool) {
        let first = failure.withLock { failure -> Bool in
            defer { failure = Failure(reason: reason, sticky: sticky || (failure?.sticky ?? false)) }
            return failure == nil
        }
        failing.store(true, ordering: .releasing)
        guard first else { return }
        // Output parked on records not written asks again: an answer acknowledging them becomes a 503.
        wakeWaiters(upTo: .max)
        logger.critical(
            sticky
                ? "cannot sync the journal to disk; "
                    + "actions are refused with 503 storage_unavailable until the server is restarted"
                : "cannot write the journal; "
                    + "actions are refused with 503 storage_unavailable until a retried write succeeds",
            ["error": .string(reason), "directory": .string(options.directory)])
    }

    /// Leaves a (non-sticky) failed state after a write succeeded.
    func recovered() {
        guard failing.load(ordering: .acquiring) else { return }
        let cleared = failure.withLock { failure -> Bool in
            guard let current = failure, !current.sticky else { return false }
            failure = nil
            return true
        }
        guard cleared else { return }
        failing.store(false, ordering: .releasing)
        logger.notice("the journal is writable again; actions are accepted", ["directory": .string(options.directory)])
    }

    /// fdatasyncs every segment written since the last sync; caller holds the io lock. False when
    /// one failed (a sticky failure: what the page cache held is unknown).
    @discardableResult
    func syncUnsynced(_ io: inout IO) -> Bool {
        var synced = true
        for (segment, fd) in io.unsynced {
            let descriptor = fd >= 0 ? fd : io.fd
            do {
                try Posix.fdatasync(descriptor)
            } catch {
                fail("\(error.about(segmentPath(segment)))", sticky: true)
                synced = false
            }
            if fd >= 0 { Posix.close(fd) }
        }
        io.unsynced = [:]
        return synced
    }

    /// Writes and fdatasyncs everything appended so far (shutdown, before deleting a segment).
    func sync() {
        io.withLock { io in
            writeOut(&io)
            syncUnsynced(&io)
        }
    }

    /// The journal's background thread, every `storage.fsyncWindowMilliseconds`: retries a failed
    /// write (so held output goes, and the journal accepts changes again, once it is writable, with no
    /// request to trigger a flush), and with `batch` syncs what was written since the last turn.
    func startBackground() {
        let window = max(1, options.fsyncWindowMilliseconds)
        let batch = options.fsync == .batch
        let thread = Thread { [weak self] in
            while true {
                usleep(useconds_t(window * 1000))
                guard let self, self.syncTimer.withLock({ $0 }) else { return }
                if self.failing.load(ordering: .acquiring) { self.flush() }
                if batch { self.syncWritten() }
            }
        }
        thread.start()
    }

    /// Syncs the segments written since the last turn (`batch`). Synced outside the io lock so loops
    /// keep writing meanwhile. Every descriptor taken is this thread's to close: retired ones leave
    /// `unsynced` here, and the open segment is synced through a duplicate, because a rotation can
    /// retire the original and a `sync()` close it while this thread is still in fdatasync (which then
    /// failed with EBADF, or synced whatever reused the number, and refused every action after).
    func syncWritten() {
        let work = io.withLock { io -> [(segment: UInt32, fd: Int32)] in
            var work: [(segment: UInt32, fd: Int32)] = []
            var kept: [UInt32: Int32] = [:]
            for (segment, fd) in io.unsynced {
                if fd >= 0 {
                    work.append((segment, fd))
                } else if io.fd >= 0 {
                    if let copy = try? Posix.dup(io.fd) { work.append((segment, copy)) } else { kept[segment] = -1 }
                }
            }
            io.unsynced = kept
            return work
        }
        for item in work {
            do throws(IOError) {
                try Posix.fdatasync(item.fd)
            } catch {
                fail("\(error.about(segmentPath(item.segment)))", sticky: true)
            }
            Posix.close(item.fd)
        }
    }
}
