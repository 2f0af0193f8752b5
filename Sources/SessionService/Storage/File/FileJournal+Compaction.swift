import Posix
import Synchronization
import Tokens

#if canImport(Glibc)
import Glibc
#endif

// Compaction (delete the oldest segment once nothing needs it) and reading old versions back.
extension FileJournal {
    /// Erases deleted sessions' records, then compacts.
    func maintain(_ resident: any ResidentSessions) {
        eraseDeletedSessions()
        compact(resident)
    }

    /// Deletes closed segments, oldest first, once no session needs them: sessions that still do are
    /// asked for a fresh snapshot (`resident`, for those in memory) or have their snapshot and tail
    /// copied forward (stored), and access tokens in the segment are journaled again.
    func compact(_ resident: any ResidentSessions) {
        var deleted = 0
        // Only segments closed before this run: the copies it writes open new ones, and chasing those
        // could go on forever when a copy fills a segment.
        let current = state.withLock { $0.segment }
        while true {
            let plan = state.withLock { state -> (segment: UInt32, keys: [UInt32], resident: [String])? in
                let oldest = state.oldestSegment
                guard oldest < current else { return nil }
                let needing = state.index.entries.filter { $0.value.oldestSegment <= oldest }
                return (oldest, needing.filter { !$0.value.resident }.map(\.key), needing.filter { $0.value.resident }.map(\.value.id))
            }
            guard let plan else { break }
            if !plan.resident.isEmpty { writeCheckpoints(plan.resident, resident) }
            if !plan.keys.isEmpty { copyForward(plan.keys) }
            carryAccessTokensForward(from: plan.segment)
            let free = state.withLock { state in !state.index.entries.values.contains { $0.oldestSegment <= plan.segment } }
            guard free else {
                logger.warning("a journal segment is still needed after compaction; retrying later", ["segment": .int(Int(plan.segment))])
                break
            }
            // The copies must be on disk before the originals go.
            sync()
            do {
                try Posix.unlink(segmentPath(plan.segment))
            } catch {
                logger.error("cannot delete a compacted journal segment", ["error": .string("\(error)")])
                break
            }
            try? Posix.syncDirectory(options.directory)
            let size = state.withLock { state in
                state.oldestSegment = plan.segment + 1
                return state.segmentSizes.removeValue(forKey: plan.segment) ?? 0
            }
            metrics.compactedBytes.increment(by: size)
            deleted += 1
        }
        if deleted > 0 {
            metrics.compactions.increment()
            logger.info("compacted the journal", ["deleted_segments": .int(deleted)])
        }
    }

    /// Has the resident sessions `ids` write checkpoints, and counts the bytes they wrote: each new
    /// snapshot and action-log checkpoint (its chunks and end record).
    func writeCheckpoints(_ ids: [String], _ resident: any ResidentSessions) {
        typealias Before = (entry: IndexEntry, snapshot: RecordLocation, actionLog: RecordLocation?)
        let before = state.withLock { state in
            ids.compactMap { id -> Before? in
                guard let entry = state.index.keys[id].flatMap({ state.index.entries[$0] }) else { return nil }
                return (entry, entry.snapshot, entry.actionLog.first)
            }
        }
        resident.writeCheckpoints(ids)
        let written = state.withLock { _ in
            before.reduce(0) { total, old in
                let entry = old.entry
                let snapshot = entry.snapshot == old.snapshot ? 0 : Int(entry.snapshot.length)
                let fresh = entry.actionLog.first != nil && entry.actionLog.first != old.actionLog
                let log = fresh ? entry.actionLog.reduce(Self.emptyRecordBytes) { $0 + Int($1.length) } : 0
                return total + snapshot + log
            }
        }
        metrics.compactionBytes.increment(by: written)
    }

    /// The framed size of a record with no payload (an action-log checkpoint's end).
    static let emptyRecordBytes = JournalRecord.frameBytes + JournalRecord.headerBytes

    /// Journals again the access tokens whose latest record lies in `segment` or before.
    func carryAccessTokensForward(from segment: UInt32) {
        state.withLock { state in
            let tokens = state.index.entries.compactMap { key, entry -> (UInt32, SessionTokenHash)? in
                guard let token = entry.accessToken, token.location.segment <= segment else { return nil }
                return (key, token.hash)
            }
            for (key, hash) in tokens {
                if let location = appendAccessToken(&state, key: key, hash) {
                    metrics.compactionBytes.increment(by: Int(location.length))
                }
            }
        }
    }

    /// Copies the latest snapshot, tail and action log of stored (non-resident) sessions to the
    /// current segment, one record at a time.
    func copyForward(_ keys: [UInt32]) {
        io.withLock { io in
            writeOut(&io)
            for key in keys { copyForward(key, &io) }
        }
    }

    /// A session deleted while it was being copied: nothing more of it may follow its delete record.
    struct CopyStopped: Error {}

    /// Copies one stored session; the caller holds the io lock, so it cannot be loaded meanwhile. The
    /// action log goes forward as a checkpoint built as its records are read, written out as it grows.
    func copyForward(_ key: UInt32, _ io: inout IO) {
        typealias Plan = (entry: IndexEntry, snapshot: RecordLocation, tail: [RecordLocation], chunks: [RecordLocation], accepts: [RecordLocation])
        let plan = state.withLock { state -> Plan? in
            // A quarantined session keeps its records where they are, damage included, until it is deleted.
            guard let entry = state.index.entries[key], !entry.resident, entry.unavailable == nil else { return nil }
            return (entry, entry.snapshot, entry.tail.map(\.location), entry.actionLog, entry.retainedAccepts.map(\.location))
        }
        guard let plan else { return }
        var reader = SegmentReader(storage: self)
        defer { reader.close() }
        func copy(_ kind: JournalRecord.Kind, _ number: UInt64, _ payload: (inout [UInt8]) -> Void) throws(CopyStopped) {
            let copied = state.withLock { state -> Bool in
                // A copy after the session's delete record would bring it back at the next start.
                guard state.index.entries[key] === plan.entry else { return false }
                let location = append(&state, kind: kind, key: key, number: number, identity: nil, payload: payload)
                metrics.compactionBytes.increment(by: Int(location?.length ?? 0))
                return true
            }
            guard copied else { throw CopyStopped() }
            if bufferedBytes() > 4 << 20 { writeOut(&io) }
        }
        do {
            for location in [plan.snapshot] + plan.tail {
                let record = try reader.read(location)
                try copy(record.kind, record.number) { $0.append(contentsOf: record.payload) }
            }
            var chunks = ActionLogCheckpoint()
            let emit = { (kind: JournalRecord.Kind, chunk: [ActionLogEntry]) throws in
                try copy(kind, chunk[chunk.count - 1].seq) { StoredActionLog.encode(chunk, into: &$0) }
            }
            for location in plan.chunks {
                let record = try reader.read(location)
                guard let entries = try? StoredActionLog.decode(payload: record.payload) else {
                    throw JournalError.corrupt(path: segmentPath(location.segment), offset: Int(location.offset), reason: "holds an action-log chunk that does not decode")
                }
                for entry in entries { try chunks.add(entry, emit: emit) }
            }
            for location in plan.accepts {
                let record = try reader.read(location)
                guard let accept = try? StoredAccept(payload: record.payload) else {
                    throw JournalError.corrupt(path: segmentPath(location.segment), offset: Int(location.offset), reason: "holds an accepted action that does not decode")
                }
                try chunks.add(ActionLogEntry(seq: record.number, at: accept.at, action: accept.body, stubbed: accept.stubbed), emit: emit)
            }
            if let last = try chunks.finish(emit: emit) { try copy(.actionLogEnd, last) { _ in } }
        } catch is CopyStopped {
            return
        } catch JournalError.corrupt(let path, let offset, let reason) {
            let message = "the journal record at \(path) offset \(offset) \(reason)"
            quarantine(key: key, reason: message)
            logger.error("a stored session is quarantined: compaction found a damaged record; its segments stay until it is deleted", ["session": .string(plan.entry.id), "path": .string(path), "offset": .int(offset)])
        } catch {
            logger.error("cannot copy a session forward during compaction; retrying later", ["session": .string(plan.entry.id), "error": .string("\(error)")])
        }
    }

    /// Every snapshot and state record of one session still on disk, oldest first.
    func records(key: UInt32) throws(IOError) -> [JournalRecord] {
        flush()
        var found: [JournalRecord] = []
        // Compaction deletes only the oldest segments; a segment gone mid-read just holds nothing newer.
        for segment in try segmentNumbers() {
            let path = segmentPath(segment)
            let data: [UInt8]
            do {
                data = try JournalFiles.readAll(path)
            } catch where error.errno == ENOENT {
                continue
            }
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    let header: JournalRecord
                    let size: Int
                    switch JournalRecord.parse(rest, withPayload: false) {
                    case .record(let record, let recordSize): (header, size) = (record, recordSize)
                    // A frame being erased (another session's) keeps its length: step over it.
                    case .corrupt(_, let frameSize?):
                        offset += frameSize
                        continue
                    default: return
                    }
                    if header.key == key, header.kind == .snapshot || header.kind == .mutation || header.kind == .forced,
                        case .record(let record, _) = JournalRecord.parse(rest)
                    {
                        found.append(record)
                    }
                    offset += size
                }
            }
        }
        return found
    }

    /// The records to replay version `version` of session `id`; nil when it is older than the retained history.
    func history(of id: String, upTo version: UInt64) throws(StorageReadError) -> StoredVersionHistory? {
        guard let key = key(for: id) else { return nil }
        let all: [JournalRecord]
        do {
            all = try records(key: key)
        } catch {
            throw StorageReadError(reason: "\(error)")
        }
        guard let base = all.filter({ $0.kind == .snapshot && $0.number <= version }).max(by: { $0.number < $1.number }),
            let snapshot = try? StoredSnapshot(version: base.number, payload: base.payload)
        else { return nil }
        var byVersion: [UInt64: JournalRecord] = [:]
        for record in all where record.kind != .snapshot && record.number > base.number && record.number <= version {
            byVersion[record.number] = record
        }
        var states: [StoredState] = []
        var next = base.number + 1
        while next <= version {
            guard let state = byVersion[next]?.storedState else { return nil }
            states.append(state)
            next += 1
        }
        return StoredVersionHistory(base: snapshot.state, states: states)
    }

    /// The oldest version of session `id` that can still be rebuilt.
    func oldestRetainedVersion(of id: String) -> UInt64? {
        guard let key = key(for: id), let all = try? records(key: key) else { return nil }
        return all.filter { $0.kind == .snapshot }.map(\.number).min()
    }
}
