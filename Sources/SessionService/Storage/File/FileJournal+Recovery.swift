import Logs
import Posix
import Tokens

#if canImport(Glibc)
    import Glibc
#endif

// Start-up: rebuild the index of sessions from the journal's record headers. Only a write cut short
// at the very end of the newest segment is cut off; every other bad frame is corruption: kept on disk,
// reported with its place, and its session quarantined.
extension FileJournal {
    /// The journal segment numbers present, oldest first.
    func segmentNumbers() throws(IOError) -> [UInt32] {
        try JournalFiles.segmentNumbers(options.directory)
    }

    func recover() throws(JournalError) {
        do throws(IOError) {
            try scan()
        } catch {
            throw .io(error)
        }
    }

    func scan() throws(IOError) {
        let segments = try segmentNumbers()
        var recovered = State()
        recovered.index.actionLogLimits = ActionLogLimits(count: options.actionLogLimit, bytes: options.actionLogBytes)
        recovered.index.historyLimits = options.history
        var records = 0
        var bytes = 0
        // For erasures: where each session's records begin, which sessions were deleted, and damage,
        // judged once the whole journal is read (a frame an erasure was overwriting is not corruption).
        var firstSeen: [UInt32: UInt32] = [:]
        var deleted = Set<UInt32>()
        var damaged: [Damage] = []
        for segment in segments {
            let path = segmentPath(segment)
            let data = try JournalFiles.readAll(path)
            bytes += data.count
            let newest = segment == segments.last
            let tornAt = data.withUnsafeBytes { raw -> Int? in
                var offset = 0
                while offset < raw.count {
                    let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    let damage: String
                    var size: Int?
                    switch JournalRecord.parse(rest, withPayload: false) {
                    case .record(let record, let size):
                        let payload = UnsafeRawBufferPointer(
                            rebasing: rest[(JournalRecord.frameBytes + JournalRecord.headerBytes)..<size])
                        let identity = record.kind == .snapshot ? StoredSnapshot.identity(payload: payload) : nil
                        let accessToken =
                            record.kind == .accessToken
                            ? SessionTokenHash(storedText: String(decoding: payload, as: UTF8.self)) : nil
                        let location = RecordLocation(segment: segment, offset: UInt32(offset), length: UInt32(size))
                        recovered.index.apply(
                            kind: record.kind, key: record.key, number: record.number, location: location,
                            identity: identity, accessToken: accessToken)
                        if record.kind == .snapshot, let entry = recovered.index.entries[record.key] {
                            entry.unavailable = nil
                            if entry.incarnation == 0 {
                                entry.incarnation = StoredSnapshot.incarnation(payload: payload)
                            }
                            // Its latest snapshot holds every timer before it.
                            if entry.snapshot == location {
                                entry.timerHint = StoredSnapshot.earliestTimer(payload: payload)
                            }
                        }
                        if record.kind == .timer, let entry = recovered.index.entries[record.key],
                            let at = TimerChange.scheduledAt(payload: payload)
                        {
                            entry.timerHint = min(entry.timerHint ?? at, at)
                        }
                        switch record.kind {
                        case .padding: break
                        case .delete:
                            deleted.insert(record.key)
                            if let first = firstSeen.removeValue(forKey: record.key) {
                                recovered.erasures[record.key] = Erasure(firstSegment: first, deleteSegment: segment)
                            }
                        default:
                            if firstSeen[record.key] == nil { firstSeen[record.key] = segment }
                        }
                        records += 1
                        offset += size
                        continue
                    case .truncated:
                        damage = "ends before the record it announces is complete"
                    case .corrupt(let reason, let announced):
                        damage = reason.description
                        size = announced
                    }
                    let next = Self.nextRecord(in: raw, after: offset)
                    // A write cut short: the last frame of the newest segment, of a possible length, with
                    // nothing readable after it. Anything else was written whole and damaged since.
                    if newest, next == nil, case .truncated = JournalRecord.parse(rest, withPayload: false) {
                        return offset
                    }
                    damaged.append(
                        quarantine(
                            &recovered.index, path: path, segment: segment, offset: offset, size: size, damage: damage,
                            frame: rest, skipped: (next ?? raw.count) - offset))
                    offset = next ?? raw.count
                }
                return nil
            }
            recovered.segmentSizes[segment] = tornAt ?? data.count
            if let tornAt, options.readOnly {
                logger.info(
                    "the newest journal segment ends inside a record (a server writing it now, or one that stopped "
                        + "mid-write); reading up to it",
                    ["path": .string(path), "kept_bytes": .int(tornAt)])
            } else if let tornAt {
                let fd = try Posix.open(path, O_WRONLY | O_CLOEXEC)
                defer { Posix.close(fd) }
                do { try Posix.ftruncate(fd, tornAt) } catch { throw error.about(path) }
                logger.warning(
                    "cut off an incomplete record at the end of the newest journal segment: the server stopped, or the machine lost power, in the middle of writing it (it was never acknowledged)",
                    ["path": .string(path), "kept_bytes": .int(tornAt), "dropped_bytes": .int(data.count - tornAt)])
            }
        }
        for damage in damaged {
            // Overwriting in place keeps a frame's length; a stop in the middle leaves a frame of a
            // deleted session, or one already marked as padding, whose checksum fails.
            if let location = damage.location,
                damage.kind == RecordKind.padding.rawValue || damage.key.map(deleted.contains) == true
            {
                recovered.unfinishedErasures.append(location)
                if let key = damage.key, let entry = recovered.index.entries[key], entry.unavailable == damage.reason {
                    entry.unavailable = nil
                }
                logger.notice(
                    "a deleted session's record was being erased when the server stopped; the erasure is finished now",
                    damage.fields)
            } else if let session = damage.session {
                var fields = damage.fields
                fields.append("session", .string(session))
                logger.error("a damaged journal record; its session is quarantined and the bytes are kept", fields)
            } else {
                logger.error(
                    "a damaged journal record of no known session; the bytes are kept and skipped", damage.fields)
            }
        }
        recovered.segment = (segments.last ?? 0) + 1
        recovered.oldestSegment = segments.first ?? recovered.segment
        let sessions = recovered.index.entries.count
        let erasures = recovered.erasures.count + recovered.unfinishedErasures.count
        state.withLock { $0 = recovered }
        if !segments.isEmpty {
            logger.info(
                "recovered the session index from the journal",
                [
                    "sessions": .int(sessions), "records": .int(records), "bytes": .int(bytes),
                    "segments": .int(segments.count),
                ])
        }
        if erasures > 0 {
            logger.notice(
                "deleted sessions' records are still on disk; they are erased in the background",
                ["sessions": .int(recovered.erasures.count), "records": .int(recovered.unfinishedErasures.count)])
        }
    }

    /// A damaged frame found by the start-up scan.
    struct Damage {
        /// Where it lies, when its announced length is possible.
        var location: RecordLocation?
        var kind: UInt8?
        var key: UInt32?
        /// The session it named and quarantined, if any.
        var session: String?
        var reason: String
        var fields: LogFields
    }

    /// Quarantines the session a damaged frame names (when its key is readable and known); the bytes
    /// stay on disk. Returns what to log once the whole journal is read.
    func quarantine(
        _ index: inout JournalIndex, path: String, segment: UInt32, offset: Int, size: Int?, damage: String,
        frame: UnsafeRawBufferPointer, skipped: Int
    ) -> Damage {
        let reason = "the journal record at \(path) offset \(offset) \(damage); history after it cannot be trusted"
        let key =
            frame.count >= JournalRecord.frameBytes + 5
            ? frame.loadLittleEndian(UInt32.self, at: JournalRecord.frameBytes + 1) : nil
        let fields: LogFields = [
            "path": .string(path), "offset": .int(offset), "damage": .string(damage), "skipped_bytes": .int(skipped),
        ]
        var session: String?
        if let key, let entry = index.entries[key] {
            entry.unavailable = reason
            session = entry.id
        }
        return Damage(
            location: size.map { RecordLocation(segment: segment, offset: UInt32(offset), length: UInt32($0)) },
            kind: frame.count > JournalRecord.frameBytes ? frame[JournalRecord.frameBytes] : nil, key: key,
            session: session, reason: reason, fields: fields)
    }

    /// The offset of the next well-formed record after a bad one, or nil when none follows.
    static func nextRecord(in raw: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + JournalRecord.frameBytes + JournalRecord.headerBytes <= raw.count {
            let rest = UnsafeRawBufferPointer(rebasing: raw[candidate...])
            let length = Int(rest.loadLittleEndian(UInt32.self, at: 0))
            if length >= JournalRecord.headerBytes, length <= rest.count - JournalRecord.frameBytes,
                RecordKind(rest[8], in: .file) != nil,
                case .record = JournalRecord.parse(rest, withPayload: false)
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }
}
