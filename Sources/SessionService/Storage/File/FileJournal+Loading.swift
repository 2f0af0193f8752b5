import Posix

#if canImport(Glibc)
    import Glibc
#endif

// Loading a stored session: its latest snapshot, the records after it and its retained action log,
// read back from the segments, checked and merged.
extension FileJournal {
    /// The records a stored session is rebuilt from.
    struct StoredRecords {
        var key: UInt32
        var snapshot: JournalRecord
        var tail: [JournalRecord]
        /// The chunks of the latest action-log checkpoint, in order.
        var actionLog: [JournalRecord]
        var accepts: [JournalRecord]
    }

    /// Reads a stored session back: latest snapshot, the records after it, and its retained action log.
    /// While the journal cannot be written, a session whose records all lie in what was written loads
    /// as usual (reads keep working); one with a record still buffered cannot be read back yet.
    func load(_ id: String) -> StorageLoad {
        // Everything buffered goes to the files first, so the records can be read back from them.
        let read = writer.writtenOut { io -> Result<StoredRecords, LoadFailure> in
            let writeFailure = unavailableReason
            return state.withLock { state in
                guard let key = state.index.keys[id], let entry = state.index.entries[key] else {
                    return .failure(.missing)
                }
                if let reason = entry.unavailable { return .failure(.unavailable(reason)) }
                // With fsync=always a written record is not durable until synced, and syncing failed.
                if let writeFailure, options.fsync == .always || !Self.isWritten(entry, io, state) {
                    return .failure(.storage(writeFailure))
                }
                return readRecords(key: key, entry)
            }
        }
        switch read {
        case .failure(.missing): return .missing
        case .failure(.unavailable(let reason)): return .unavailable(reason)
        case .failure(.corrupt(let key, let reason)):
            quarantine(key: key, reason: reason)
            logger.error("a stored session is quarantined", ["session": .string(id), "reason": .string(reason)])
            return .unavailable(reason)
        case .failure(.storage(let reason)):
            readFailures.withLock { $0[id] = reason }
            logger.error(
                "a stored session cannot be read from the journal now; "
                    + "it is not quarantined, the next request tries again",
                ["session": .string(id), "error": .string(reason)])
            return .storageUnavailable(reason)
        case .success(let records):
            _ = readFailures.withLock { $0.removeValue(forKey: id) }
            switch Self.history(records) {
            case .success(let history):
                // Resident from here on: the live session tracks its records, and the index no longer keeps a tail.
                let found = state.withLock { state -> (entry: IndexEntry, position: UInt64)? in
                    guard let entry = state.index.entries[records.key] else { return nil }
                    entry.resident = true
                    entry.tail = []
                    // Its records are all written: while writes fail, what it shows must not wait for
                    // other sessions' records (everything appended), which may never be written.
                    let position =
                        writer.failing.load(ordering: .acquiring)
                        ? writer.written.load(ordering: .acquiring) : state.buffer.appended
                    return (entry, position)
                }
                // Deleted meanwhile: there is nothing left to serve.
                guard let (entry, position) = found else { return .missing }
                return .loaded(
                    history,
                    FileSessionLog(
                        journal: self, key: records.key, entry: entry, id: id, reactor: history.snapshot.reactor,
                        position: position))
            case .failure(let failure):
                quarantine(key: records.key, reason: failure.reason)
                logger.error(
                    "a stored session is quarantined", ["session": .string(id), "reason": .string(failure.reason)])
                return .unavailable(failure.reason)
            }
        }
    }

    /// Reads the records `entry` names back from the segments; the caller holds the state lock.
    func readRecords(key: UInt32, _ entry: IndexEntry) -> Result<StoredRecords, LoadFailure> {
        var reader = SegmentReader(storage: self)
        defer { reader.close() }
        do throws(JournalError) {
            let snapshot = try reader.read(entry.snapshot)
            var tail: [JournalRecord] = []
            tail.reserveCapacity(entry.tail.count)
            for record in entry.tail { tail.append(try reader.read(record.location)) }
            var actionLog: [JournalRecord] = []
            for chunk in entry.actionLog { actionLog.append(try reader.read(chunk)) }
            var accepts: [JournalRecord] = []
            accepts.reserveCapacity(entry.retainedAccepts.count)
            for accept in entry.retainedAccepts { accepts.append(try reader.read(accept.location)) }
            return .success(
                StoredRecords(key: key, snapshot: snapshot, tail: tail, actionLog: actionLog, accepts: accepts))
        } catch {
            switch error {
            // Descriptors run out, a disk read fails: it may pass, so nothing is quarantined.
            case .io(let failure): return .failure(.storage("\(failure)"))
            default: return .failure(.corrupt(key: key, reason: "its journal cannot be read back: \(error)"))
            }
        }
    }

    /// Reads a stored session's history without loading it: nothing is marked, written or quarantined.
    func peek(_ id: String) -> Result<StoredHistory, StorageReadError> {
        let read = state.withLock { state -> Result<StoredRecords, LoadFailure> in
            guard let key = state.index.keys[id], let entry = state.index.entries[key] else {
                return .failure(.missing)
            }
            if let reason = entry.unavailable { return .failure(.unavailable(reason)) }
            return readRecords(key: key, entry)
        }
        switch read {
        case .success(let records):
            return Self.history(records).mapError { StorageReadError(reason: $0.reason) }
        case .failure(.missing): return .failure(.gone)
        case .failure(.unavailable(let reason)), .failure(.corrupt(_, let reason)), .failure(.storage(let reason)):
            return .failure(StorageReadError(reason: reason))
        }
    }

    enum LoadFailure: Error {
        case missing
        case unavailable(String)
        /// A record does not read back as what the index says lies there: the session is quarantined.
        case corrupt(key: UInt32, reason: String)
        /// The journal cannot be written (what is buffered cannot be read back yet) or read right now.
        case storage(String)

        var reason: String {
            if case .unavailable(let reason) = self { return reason }
            return "missing"
        }
    }

    /// Checks and merges a snapshot, its tail and its action log.
    static func history(_ records: StoredRecords) -> Result<StoredHistory, LoadFailure> {
        let (snapshotRecord, tail) = (records.snapshot, records.tail)
        let snapshot: StoredSnapshot
        do {
            snapshot = try StoredSnapshot(version: snapshotRecord.number, payload: snapshotRecord.payload)
        } catch {
            return .failure(.unavailable("its snapshot at version \(snapshotRecord.number) is malformed: \(error)"))
        }
        let states = tail.compactMap(\.storedState).sorted { $0.version < $1.version }
        var expected = snapshot.version + 1
        for record in states {
            guard record.version == expected else {
                return .failure(
                    .unavailable(
                        "the journal misses version \(expected) of this session (it has \(record.version) next)"))
            }
            expected += 1
        }
        // Older entries first (a legacy snapshot's embedded log, compaction's action-log copy), then
        // the retained accept records; a seq seen again replaces the earlier entry.
        var bySeq: [UInt64: ActionLogEntry] = [:]
        for entry in snapshot.actions { bySeq[entry.seq] = entry }
        for record in records.actionLog {
            guard let entries = try? StoredActionLog.decode(payload: record.payload) else {
                return .failure(
                    .unavailable("the action-log record up to seq \(record.number) is malformed in the journal"))
            }
            for entry in entries { bySeq[entry.seq] = entry }
        }
        var running = Set(snapshot.running)
        var lastSeq = snapshot.lastSeq
        var timers = Dictionary(snapshot.timers.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        var timerSerial = snapshot.timerSerial
        for record in records.accepts where bySeq[record.number] == nil {
            guard let accept = try? StoredAccept(payload: record.payload) else {
                return .failure(.unavailable("the accepted action \(record.number) is malformed in the journal"))
            }
            bySeq[record.number] = accept.entry(seq: record.number)
            lastSeq = max(lastSeq, record.number)
        }
        for record in tail {
            switch record.kind {
            case .accept:
                guard let accept = try? StoredAccept(payload: record.payload) else {
                    return .failure(.unavailable("the accepted action \(record.number) is malformed in the journal"))
                }
                if bySeq[record.number] == nil {
                    bySeq[record.number] = accept.entry(seq: record.number)
                }
                if !accept.completed { running.insert(record.number) }
                lastSeq = max(lastSeq, record.number)
                // The accept of a timer's action is the timer's removal: it fired, once.
                if let timer = accept.timer { timers[timer] = nil }
            case .complete:
                running.remove(record.number)
            case .timer:
                guard let change = try? TimerChange(payload: record.payload) else {
                    return .failure(.unavailable("the timer record \(record.number) is malformed in the journal"))
                }
                switch change {
                case .schedule(let timer): timers[timer.name] = timer
                case .cancel(let name): timers[name] = nil
                }
                timerSerial = max(timerSerial, record.number)
            default:
                break
            }
        }
        var actions = bySeq.values.sorted { $0.seq < $1.seq }
        for index in actions.indices where running.contains(actions[index].seq) {
            actions[index].interrupted = true
        }
        var history = StoredHistory(
            snapshot: snapshot, states: states, actions: actions, lastSeq: lastSeq, hasTail: !tail.isEmpty)
        history.timers = timers.values.sorted { ($0.at, $0.name) < ($1.at, $1.name) }
        history.timerSerial = timerSerial
        return .success(history)
    }

    /// Whether every record `entry`'s load reads lies in what was written; the caller holds both locks,
    /// after a write-out. The buffer's chunks are written in order, so the first one left marks the end.
    static func isWritten(_ entry: IndexEntry, _ io: JournalWriter.IO, _ state: State) -> Bool {
        guard let first = state.buffer.chunks.first(where: { !$0.bytes.isEmpty }) else { return true }
        let end = (segment: first.segment, offset: first.segment == io.fdSegment ? io.fdEnd : 0)
        func written(_ location: RecordLocation) -> Bool {
            let ends = Int(location.offset) + Int(location.length)
            return location.segment < end.segment || (location.segment == end.segment && ends <= end.offset)
        }
        return written(entry.snapshot) && entry.tail.allSatisfy { written($0.location) }
            && entry.actionLog.allSatisfy(written) && entry.retainedAccepts.allSatisfy { written($0.location) }
    }

    /// Reads one record back from its segment (the buffer must be written out).
    func readRecord(_ location: RecordLocation) throws(JournalError) -> JournalRecord {
        var reader = SegmentReader(storage: self)
        defer { reader.close() }
        return try reader.read(location)
    }
}

/// Reads records back from segments, keeping each segment open across the reads of one load.
struct SegmentReader {
    let storage: FileJournal
    var open: [UInt32: Int32] = [:]

    init(storage: FileJournal) { self.storage = storage }

    mutating func read(_ location: RecordLocation) throws(JournalError) -> JournalRecord {
        let path = storage.segmentPath(location.segment)
        let bytes: [UInt8]
        do throws(IOError) {
            let fd: Int32
            if let existing = open[location.segment] {
                fd = existing
            } else {
                fd = try Posix.open(path, O_RDONLY | O_CLOEXEC)
                open[location.segment] = fd
            }
            bytes = try JournalFiles.read(fd, offset: Int(location.offset), count: Int(location.length), path: path)
        } catch {
            throw .io(error)
        }
        let parsed = bytes.withUnsafeBytes { JournalRecord.parse($0) }
        guard case .record(let record, _) = parsed else {
            throw .corrupt(path: path, offset: Int(location.offset), reason: "no longer reads back (\(parsed))")
        }
        return record
    }

    mutating func close() {
        for fd in open.values { Posix.close(fd) }
        open = [:]
    }
}
