import Posix
import Synchronization
import Tokens

#if canImport(Glibc)
    import Glibc
#endif

// Compaction: delete the oldest segments once deleting them pays off.
extension FileJournal {
    /// Erases deleted sessions' records, then compacts.
    func maintain(_ resident: any ResidentSessions) {
        eraseDeletedSessions()
        compact(resident)
    }

    /// Deletes the longest run of the oldest closed segments that pays off (``CompactionPlan``): the
    /// sessions that still need them first move their data forward (a fresh snapshot and action-log
    /// checkpoint from each resident one, a copy of each stored one's records), and access tokens in
    /// them are journaled again. Runs only when something was appended since the last time nothing
    /// was due, so an idle journal is not even read.
    func compact(_ resident: any ResidentSessions) {
        typealias Pass = (oldest: UInt32, last: UInt32, resident: [String], copied: [UInt32])
        // Copies that cannot be written would be all that is left of what the deleted segments held.
        guard unavailableReason == nil else { return }
        let pass = state.withLock { state -> Pass? in
            guard state.settledAt != state.buffer.appended else { return nil }
            var plan = CompactionPlan(oldest: state.oldestSegment, current: state.buffer.segment)
            for entry in state.index.entries.values {
                // A quarantined session keeps its records where they are, damage included, until it is deleted.
                if entry.unavailable != nil {
                    plan.keeps(entry.oldestSegment)
                    continue
                }
                plan.needs(entry.oldestDataSegment, bytes: entry.liveBytes)
                if let token = entry.accessToken?.location { plan.needs(token.segment, bytes: Int(token.length)) }
            }
            guard let last = plan.lastSegment(sizes: state.segmentSizes) else {
                state.settledAt = state.buffer.appended
                return nil
            }
            let moving = state.index.entries.filter { $0.value.oldestDataSegment <= last }
            // Stored sessions are copied whole; resident ones have their history copied, then checkpoint.
            let copied = moving.filter { !$0.value.resident || !$0.value.history.isEmpty }.map(\.key)
            return (plan.oldest, last, moving.values.filter(\.resident).map(\.id), copied)
        }
        guard let pass else { return }
        if !pass.copied.isEmpty { copyForward(pass.copied) }
        if !pass.resident.isEmpty { writeCheckpoints(pass.resident, resident) }
        carryAccessTokensForward(through: pass.last)
        // What is still needed stays, with every later segment (a session loaded or left memory meanwhile,
        // or one in memory could not write its checkpoint): the run is cut short before it.
        let needed = state.withLock { state -> (segment: UInt32, id: String)? in
            let first = state.index.entries.values.min { $0.oldestSegment < $1.oldestSegment }
            return first.map { ($0.oldestSegment, $0.id) }
        }
        var last = pass.last
        if let needed, needed.segment <= pass.last {
            logger.warning(
                "a journal segment is still needed after compaction; retrying after the next change",
                ["segment": .int(Int(needed.segment)), "session": .string(needed.id)])
            guard needed.segment > pass.oldest else {
                state.withLock { $0.settledAt = $0.buffer.appended }
                return
            }
            last = needed.segment - 1
        }
        // The copies must be on disk before the originals go.
        let copiedThrough = appendedPosition
        sync()
        guard writer.written.load(ordering: .acquiring) >= copiedThrough, unavailableReason == nil else {
            logger.error(
                "compaction's copies cannot be written; no segment is deleted",
                ["error": .string(unavailableReason ?? "the write did not complete")])
            return
        }
        var deleted = 0
        var freed = 0
        var failed = last < pass.last
        for segment in pass.oldest...last {
            do {
                try Posix.unlink(segmentPath(segment))
            } catch  where error.errno != ENOENT {
                logger.error(
                    "cannot delete a compacted journal segment; retrying after the next change",
                    ["error": .string("\(error)")])
                failed = true
                break
            } catch {}
            freed += state.withLock { state in
                state.oldestSegment = segment + 1
                return state.segmentSizes.removeValue(forKey: segment) ?? 0
            }
            deleted += 1
        }
        try? Posix.syncDirectory(options.directory)
        // Planned again at the next tick: a further run may pay off now that this one is gone.
        state.withLock { $0.settledAt = failed ? $0.buffer.appended : nil }
        guard deleted > 0 else { return }
        metrics.compactions.increment()
        metrics.compactedBytes.increment(by: freed)
        logger.info("compacted the journal", ["deleted_segments": .int(deleted), "deleted_bytes": .int(freed)])
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
    func carryAccessTokensForward(through segment: UInt32) {
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

    /// Copies sessions' records to the current segment, one record at a time: a stored session's
    /// retained history, latest snapshot, tail and action log; a resident one's retained history (its
    /// checkpoint writes the rest).
    func copyForward(_ keys: [UInt32]) {
        writer.writtenOut { io in
            for key in keys { copyForward(key, &io) }
        }
    }

    /// A session deleted while it was being copied: nothing more of it may follow its delete record.
    struct CopyStopped: Error {}

    /// Copies one session; the caller holds the io lock, so a stored one cannot be loaded meanwhile.
    /// Its retained history goes first, oldest first, so the start-up scan meets its base snapshot
    /// before anything else of it once the originals are gone. The action log goes forward as a
    /// checkpoint built as its records are read, written out as it grows.
    func copyForward(_ key: UInt32, _ io: inout JournalWriter.IO) {
        typealias Plan = (
            entry: IndexEntry, history: [RecordLocation], latest: [RecordLocation], chunks: [RecordLocation],
            accepts: [RecordLocation]
        )
        let plan = state.withLock { state -> Plan? in
            // A quarantined session keeps its records where they are, damage included, until it is deleted.
            guard let entry = state.index.entries[key], entry.unavailable == nil else { return nil }
            if entry.resident { return (entry, entry.history.retained.map(\.location), [], [], []) }
            // History up to the latest snapshot: that snapshot and the tail follow.
            let older = entry.history.retained.prefix { $0.number < entry.snapshotVersion || $0.kind != .snapshot }
            let latest = [entry.snapshot] + entry.tail.map(\.location)
            return (entry, older.map(\.location), latest, entry.actionLog, entry.retainedAccepts.map(\.location))
        }
        guard let plan else { return }
        var reader = SegmentReader(storage: self)
        defer { reader.close() }
        func copy(_ kind: RecordKind, _ number: UInt64, _ payload: (inout [UInt8]) -> Void) throws(CopyStopped) {
            let copied = state.withLock { state -> Bool in
                // A copy after the session's delete record would bring it back at the next start.
                guard state.index.entries[key] === plan.entry else { return false }
                let location = append(&state, kind: kind, key: key, number: number, identity: nil, payload: payload)
                metrics.compactionBytes.increment(by: Int(location?.length ?? 0))
                return true
            }
            guard copied else { throw CopyStopped() }
            if writer.bufferedBytes() > 4 << 20 { writer.writeOut(&io) }
        }
        do {
            for location in plan.history + plan.latest {
                let record = try reader.read(location)
                try copy(record.kind, record.number) { $0.append(contentsOf: record.payload) }
            }
            var chunks = ActionLogCheckpoint()
            let emit = { (kind: RecordKind, chunk: [ActionLogEntry]) throws in
                try copy(kind, chunk[chunk.count - 1].seq) { StoredActionLog.encode(chunk, into: &$0) }
            }
            for location in plan.chunks {
                let record = try reader.read(location)
                guard let entries = try? StoredActionLog.decode(payload: record.payload) else {
                    throw JournalError.corrupt(
                        path: segmentPath(location.segment), offset: Int(location.offset),
                        reason: "holds an action-log chunk that does not decode")
                }
                for entry in entries { try chunks.add(entry, emit: emit) }
            }
            for location in plan.accepts {
                let record = try reader.read(location)
                guard let accept = try? StoredAccept(payload: record.payload) else {
                    throw JournalError.corrupt(
                        path: segmentPath(location.segment), offset: Int(location.offset),
                        reason: "holds an accepted action that does not decode")
                }
                try chunks.add(accept.entry(seq: record.number), emit: emit)
            }
            if let last = try chunks.finish(emit: emit) { try copy(.actionLogEnd, last) { _ in } }
        } catch is CopyStopped {
            return
        } catch JournalError.corrupt(let path, let offset, let reason) {
            let message = "the journal record at \(path) offset \(offset) \(reason)"
            quarantine(key: key, reason: message)
            logger.error(
                "a stored session is quarantined: compaction found a damaged record; "
                    + "its segments stay until it is deleted",
                ["session": .string(plan.entry.id), "path": .string(path), "offset": .int(offset)])
        } catch {
            logger.error(
                "cannot copy a session forward during compaction; retrying later",
                ["session": .string(plan.entry.id), "error": .string("\(error)")])
        }
    }
}
