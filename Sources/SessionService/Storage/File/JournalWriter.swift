import Foundation
import Logs
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The file journal's writing half: appends records to an in-memory buffer, writes the buffer out with
/// one `write(2)` per segment touched (group commit), syncs it from a background thread (`batch`) or
/// before output leaves (`always`), and holds the failed state while writes fail.
///
/// The buffer lives in the journal's ``FileJournal/State`` (``Buffer``), under the one lock an append
/// takes, so a record's place in the buffer and in the index change together; the writer reaches it
/// through the shared ``JournalStateLock``. Its own locks are the descriptor's (``io``, held across a
/// write) and the waiters'; an append takes neither.
///
/// ```swift
/// let writer = JournalWriter(options: options, logger: logger, metrics: metrics, state: state)
/// writer.start()
/// let location = state.withLock { writer.append(&$0, kind: .snapshot, key: 1, number: 1) { _ in } }
/// writer.whenDurable(writer.appendedPosition) { print("written:", location as Any) }
/// ```
final class JournalWriter: Sendable {
    /// Bytes appended to one segment and not yet written.
    struct Chunk {
        var segment: UInt32
        var bytes: [UInt8]
    }

    /// The writer's part of the journal's state, changed under the journal's lock.
    struct Buffer {
        /// What was appended and not yet written, one chunk per segment, oldest first.
        var chunks: [Chunk] = []
        /// The last written buffer, emptied, for the next chunk: a commit then allocates nothing.
        var spare: [UInt8] = []
        /// The list of chunks last written, emptied: the next write takes it, so appending the first chunk
        /// after a write allocates no list (an allocation and a free per group commit, measured).
        var spareChunks: [Chunk] = []
        /// The segment appends go to.
        var segment: UInt32 = 1
        /// Bytes written plus buffered in the current segment.
        var segmentLength = 0
        /// How many records were appended (the position of the newest).
        var appended: UInt64 = 0
    }

    /// The open segment's descriptor and those written since the last sync; held across a write.
    struct IO {
        /// The open segment's descriptor (-1: none open).
        var fd: Int32 = -1
        /// The segment `fd` is.
        var fdSegment: UInt32 = 0
        /// Where the open segment ends, kept here so a failed write is cut back without asking the kernel first.
        var fdEnd = 0
        /// Segments written since the last fdatasync (their descriptors, kept open until synced).
        var unsynced: [UInt32: Int32] = [:] { didSet { openSegmentNoted = false } }
        /// True once `unsynced` is known to hold the open segment: a group commit then skips that lookup.
        /// Cleared whenever `unsynced` changes or another segment is opened.
        var openSegmentNoted = false
        /// Whether the background thread was asked for a turn since its last one began (``askForTurn(_:)``).
        var turnAsked = false
    }

    /// Why the journal cannot be written, while it cannot: actions are refused meanwhile.
    struct Failure {
        var reason: String
        /// A failed fdatasync: what the page cache holds is unknown, so only a restart clears it.
        var sticky: Bool
    }

    let options: FileJournal.Options
    let logger: Logger
    let metrics: FileJournalMetrics
    /// The journal's state, whose ``FileJournal/State/buffer`` this writer takes and gives back.
    let state: JournalStateLock
    /// The descriptors; held across a write, and while a load reads records back (``writtenOut(_:)``).
    let io = Mutex(IO())
    /// How many records were appended; read without the lock by the output hook.
    let appended = Atomic<UInt64>(0)
    /// How many appended records are written (and, with `always`, synced).
    let written = Atomic<UInt64>(0)
    /// Whether the background thread runs on (false once ``close()`` began).
    let running = Mutex<Bool>(true)
    /// Why writes fail, while they do.
    let failure = Mutex<Failure?>(nil)
    /// Whether ``failure`` is set; read on every action without the lock.
    let failing = Atomic<Bool>(false)
    /// Output waiting for positions that are not written yet (while writes fail), woken once they are.
    let waiters = Mutex<[(position: UInt64, wake: @Sendable () -> Void)]>([])
    /// Signalled when the background thread has work: something written to sync (`batch`), a failure to retry,
    /// the close. An idle journal's thread waits here instead of waking every window.
    let turns = DispatchSemaphore(value: 0)
    /// The background thread's turns so far; whether it waits for work now (for tests).
    let turnsTaken = Atomic<Int>(0)
    let parked = Atomic<Bool>(false)

    /// A writer for the journal whose state is `state`; ``start()`` starts its background thread.
    init(options: FileJournal.Options, logger: Logger, metrics: FileJournalMetrics, state: JournalStateLock) {
        self.options = options
        self.logger = logger
        self.metrics = metrics
        self.state = state
    }

    // A writer dropped without ``close()`` lets its waiting thread end.
    deinit { turns.signal() }

    /// The file of segment `segment`.
    func segmentPath(_ segment: UInt32) -> String {
        JournalFiles.segmentPath(options.directory, segment)
    }

    /// Writes out everything, syncs it and closes the open segment; false when it was closed before.
    @discardableResult
    func close() -> Bool {
        let first = running.withLock { running -> Bool in
            defer { running = false }
            return running
        }
        guard first else { return false }
        turns.signal()
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
        return true
    }

    // MARK: appending

    /// Appends one record's bytes to the buffer and returns where it will lie; the caller holds the state
    /// lock (and updates the index with the location). Its position is `state.buffer.appended` right after;
    /// nil (nothing appended) when its body would be larger than ``JournalRecord/maxBodyBytes``.
    // Inlined into `FileJournal.append`, so the payload closure is specialized once as before: called
    // through a second level, the accept's captured payload was copied per append (callgrind, ~130
    // instructions per POST).
    @inline(__always)
    func append(
        _ state: inout FileJournal.State, kind: RecordKind, key: UInt32, number: UInt64,
        payload: (inout [UInt8]) -> Void
    ) -> RecordLocation? {
        if state.buffer.segmentLength >= options.segmentBytes {
            state.segmentSizes[state.buffer.segment] = state.buffer.segmentLength
            state.buffer.segment += 1
            state.buffer.segmentLength = 0
        }
        if state.buffer.chunks.last?.segment != state.buffer.segment {
            var bytes: [UInt8] = []
            swap(&bytes, &state.buffer.spare)
            if bytes.capacity == 0 { bytes.reserveCapacity(16 * 1024) }
            state.buffer.chunks.append(Chunk(segment: state.buffer.segment, bytes: bytes))
        }
        let last = state.buffer.chunks.count - 1
        let start = state.buffer.chunks[last].bytes.count
        guard
            JournalRecord.append(
                kind: kind, key: key, number: number, to: &state.buffer.chunks[last].bytes, payload: payload)
        else {
            logger.error(
                "a journal record larger than the record limit was refused; nothing of it was written",
                ["kind": .string("\(kind)"), "limit_bytes": .int(JournalRecord.maxBodyBytes)])
            return nil
        }
        let length = state.buffer.chunks[last].bytes.count - start
        let location = RecordLocation(
            segment: state.buffer.segment, offset: UInt32(state.buffer.segmentLength), length: UInt32(length))
        state.buffer.segmentLength += length
        state.buffer.appended += 1
        appended.store(state.buffer.appended, ordering: .releasing)
        return location
    }

    // MARK: group commit

    /// The position of the newest record appended (read without a lock).
    var appendedPosition: UInt64 { appended.load(ordering: .acquiring) }

    /// Cheap when `position` is written; otherwise writes (and with `always` syncs) the buffer, so that
    /// what a response or event is about to show is in the journal first. False while writes fail.
    func isDurable(_ position: UInt64) -> Bool {
        if written.load(ordering: .acquiring) >= position { return true }
        flush()
        return written.load(ordering: .acquiring) >= position
    }

    /// Calls `wake` once `position` is written (at once when it is, or can be now).
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

    /// Runs `body` holding the io lock, after writing out everything appended: no write happens while it
    /// reads records back from the segments.
    func writtenOut<Result>(_ body: (inout IO) -> sending Result) -> sending Result {
        io.withLock { io in
            writeOut(&io)
            return body(&io)
        }
    }

    /// Takes the buffer and writes it; caller holds the io lock. When a write fails, the file is cut
    /// back to where the write began and the unwritten chunks go back to the front of the buffer, to
    /// be retried by the next flush (record locations stay valid); actions are refused meanwhile.
    func writeOut(_ io: inout IO) {
        var (chunks, count) = state.withLock { state -> ([Chunk], UInt64) in
            var chunks: [Chunk] = []
            swap(&chunks, &state.buffer.spareChunks)
            swap(&chunks, &state.buffer.chunks)
            return (chunks, state.buffer.appended)
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
                    io.openSegmentNoted = false
                    io.fdEnd = try Posix.size(io.fd)
                    // Best effort, as before: the segment's entry reaches the disk with the next sync of the
                    // folder at the latest.
                    if options.fsync != .never { try? Posix.syncDirectory(options.directory) }
                }
                let fd = io.fd
                start = io.fdEnd
                // A typed-throws closure here crashes the 6.3 compiler; a Result carries the error out.
                let result = chunk.bytes.withUnsafeBytes { bytes in
                    Swift.Result { () throws(IOError) in try Posix.writeAll(fd, bytes) }
                }
                // The path is named only for an error message: formatting it cost more than the rest of a commit.
                do { try result.get() } catch { throw error.about(segmentPath(chunk.segment)) }
                io.fdEnd += chunk.bytes.count
                metrics.writtenBytes.increment(by: chunk.bytes.count)
                if options.fsync != .never, !io.openSegmentNoted {
                    if io.unsynced[chunk.segment] == nil { io.unsynced[chunk.segment] = -1 }
                    io.openSegmentNoted = true
                }
            } catch {
                let unwritten = Array(chunks[position...])
                state.withLock { $0.buffer.chunks.insert(contentsOf: unwritten, at: 0) }
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
        if options.fsync == .batch, !io.turnAsked, !io.unsynced.isEmpty { askForTurn(&io) }
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
            if bytes.capacity > 0, state.buffer.spare.capacity == 0 { state.buffer.spare = bytes }
            if state.buffer.spareChunks.capacity == 0 { state.buffer.spareChunks = chunks }
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
        state.withLock { $0.buffer.chunks.reduce(0) { $0 + $1.bytes.count } }
    }

    /// The largest written buffer kept for reuse.
    static let spareBufferLimit = 1 << 20
    /// The longest list of chunks kept for the next write (a longer one is given back).
    static let spareChunkLimit = 64

    // MARK: failure

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
        // The background thread retries the write every window from now on, until it succeeds.
        turns.signal()
        // Output parked on records not written asks again: an answer acknowledging them becomes a 503.
        wakeWaiters(upTo: .max)
        logger.critical(
            sticky
                ? "cannot sync the journal to disk; actions are refused with 503 storage_unavailable until the "
                    + "server is restarted"
                : "cannot write the journal; actions are refused with 503 storage_unavailable until a retried "
                    + "write succeeds",
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

    // MARK: syncing

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

    /// Asks the background thread for a turn (once per turn: later writes find it asked); caller holds the io lock.
    func askForTurn(_ io: inout IO) {
        io.turnAsked = true
        turns.signal()
    }

    /// Starts the background thread. It waits until there is work (``turns``), then one
    /// `storage.fsyncWindowMilliseconds` more, so one sync covers the window's writes; with `batch` it syncs what
    /// was written since its last turn, and while writes fail it retries them every window (so held output goes,
    /// and the journal accepts changes again, once it is writable, with no request to trigger a flush). An idle
    /// journal's thread does not wake.
    func start() {
        let window = max(1, options.fsyncWindowMilliseconds)
        let batch = options.fsync == .batch
        let turns = self.turns
        let thread = Thread { [weak self] in
            while true {
                self?.parked.store(true, ordering: .releasing)
                turns.wait()
                self?.parked.store(false, ordering: .releasing)
                var again = true
                while again {
                    usleep(useconds_t(window * 1000))
                    guard let self, self.running.withLock({ $0 }) else { return }
                    // Cleared before the sync: a write from here on asks for the next turn.
                    self.io.withLock { $0.turnAsked = false }
                    self.turnsTaken.add(1, ordering: .relaxed)
                    if self.failing.load(ordering: .acquiring) { self.flush() }
                    if batch { self.syncWritten() }
                    again = self.failing.load(ordering: .acquiring)
                }
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

/// The journal's ``FileJournal/State`` behind its one lock, shared by the journal and its ``JournalWriter``:
/// an append changes the buffer and the index together, so both live under the same lock.
final class JournalStateLock: Sendable {
    private let mutex: Mutex<FileJournal.State>

    init(_ state: sending FileJournal.State) { mutex = Mutex(state) }

    /// Runs `body` with the state, under the lock.
    func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending FileJournal.State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock(body)
    }
}
