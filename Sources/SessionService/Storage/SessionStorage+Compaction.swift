import Posix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The records needed to rebuild one past version: a snapshot's state and the state records after it.
struct StoredVersionHistory: Sendable {
    var base: [UInt8]
    var records: [JournalRecord]
}

// Compaction (delete the oldest segment once nothing needs it) and reading old versions back.
extension SessionStorage {
    /// Deletes closed segments, oldest first, once no session needs them: sessions that still do are
    /// asked for a fresh snapshot (resident) or have their snapshot and tail copied forward (stored).
    public func compact() {
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
            if !plan.resident.isEmpty, let request = checkpointRequest.withLock({ $0 }) {
                request(plan.resident)
            }
            if !plan.keys.isEmpty { copyForward(plan.keys) }
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
            state.withLock { $0.oldestSegment = plan.segment + 1 }
            deleted += 1
        }
        if deleted > 0 { logger.info("compacted the journal", ["deleted_segments": .int(deleted)]) }
    }

    /// Copies the latest snapshot and tail of stored (non-resident) sessions to the current segment.
    func copyForward(_ keys: [UInt32]) {
        io.withLock { io in
            writeOut(&io)
            state.withLock { state in
                for key in keys {
                    guard let entry = state.index.entries[key], !entry.resident else { continue }
                    var reader = SegmentReader(storage: self)
                    defer { reader.close() }
                    do {
                        var records = [try reader.read(entry.snapshot)]
                        for record in entry.tail { records.append(try reader.read(record.location)) }
                        // The retained action log goes forward as one action-log record.
                        var log: [ActionLogEntry] = []
                        if let location = entry.actionLog { log = (try? StoredActionLog.decode(payload: try reader.read(location).payload)) ?? [] }
                        for accept in entry.retainedAccepts {
                            let record = try reader.read(accept.location)
                            if let stored = try? StoredAccept(payload: record.payload) {
                                log.append(ActionLogEntry(seq: record.number, at: stored.at, action: stored.body, stubbed: stored.stubbed))
                            }
                        }
                        for record in records {
                            _ = append(&state, kind: record.kind, key: key, number: record.number, identity: nil) { $0.append(contentsOf: record.payload) }
                        }
                        if let last = log.last?.seq {
                            _ = append(&state, kind: .actionLog, key: key, number: last, identity: nil) { StoredActionLog.encode(log, into: &$0) }
                        }
                    } catch {
                        logger.error("cannot copy a session forward during compaction", ["session": .string(entry.id), "error": .string("\(error)")])
                    }
                }
            }
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
                    guard case .record(let header, let size) = JournalRecord.parse(rest, withPayload: false) else { break }
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
    func history(id: String, upTo version: UInt64) throws(IOError) -> StoredVersionHistory? {
        guard let key = key(for: id) else { return nil }
        let all = try records(key: key)
        guard let base = all.filter({ $0.kind == .snapshot && $0.number <= version }).max(by: { $0.number < $1.number }),
            let snapshot = try? StoredSnapshot(version: base.number, payload: base.payload)
        else { return nil }
        var byVersion: [UInt64: JournalRecord] = [:]
        for record in all where record.kind != .snapshot && record.number > base.number && record.number <= version {
            byVersion[record.number] = record
        }
        var records: [JournalRecord] = []
        var next = base.number + 1
        while next <= version {
            guard let record = byVersion[next] else { return nil }
            records.append(record)
            next += 1
        }
        return StoredVersionHistory(base: snapshot.state, records: records)
    }

    /// The oldest version of session `id` that can still be rebuilt.
    func oldestRetainedVersion(id: String) -> UInt64? {
        guard let key = key(for: id), let all = try? records(key: key) else { return nil }
        return all.filter { $0.kind == .snapshot }.map(\.number).min()
    }
}
