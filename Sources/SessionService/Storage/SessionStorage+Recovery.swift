import Logs
import Posix

#if canImport(Glibc)
import Glibc
#endif

// Start-up: rebuild the index of sessions from the journal's record headers. Only a write cut short
// at the very end of the newest segment is cut off; every other bad frame is corruption: kept on disk,
// reported with its place, and its session quarantined.
extension SessionStorage {
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
        var records = 0
        var bytes = 0
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
                    switch JournalRecord.parse(rest, withPayload: false) {
                    case .record(let record, let size):
                        let identity = record.kind == .snapshot ? StoredSnapshot.identity(payload: UnsafeRawBufferPointer(rebasing: rest[(JournalRecord.frameBytes + JournalRecord.headerBytes)..<size])) : nil
                        let location = RecordLocation(segment: segment, offset: UInt32(offset), length: UInt32(size))
                        recovered.index.apply(kind: record.kind, key: record.key, number: record.number, location: location, identity: identity)
                        if record.kind == .snapshot { recovered.index.entries[record.key]?.unavailable = nil }
                        records += 1
                        offset += size
                        continue
                    case .truncated:
                        damage = "ends before the record it announces is complete"
                    case .corrupt(let reason, _):
                        damage = reason.description
                    }
                    let next = Self.nextRecord(in: raw, after: offset)
                    // A write cut short: the last frame of the newest segment, of a possible length, with
                    // nothing readable after it. Anything else was written whole and damaged since.
                    if newest, next == nil, case .truncated = JournalRecord.parse(rest, withPayload: false) { return offset }
                    reportCorruption(&recovered.index, path: path, offset: offset, damage: damage, frame: rest, skipped: (next ?? raw.count) - offset)
                    offset = next ?? raw.count
                }
                return nil
            }
            if let tornAt {
                let fd = try Posix.open(path, O_WRONLY | O_CLOEXEC)
                defer { Posix.close(fd) }
                do { try Posix.ftruncate(fd, tornAt) } catch { throw error.about(path) }
                logger.warning(
                    "cut off an incomplete record at the end of the newest journal segment: the server stopped, or the machine lost power, in the middle of writing it (it was never acknowledged)",
                    ["path": .string(path), "kept_bytes": .int(tornAt), "dropped_bytes": .int(data.count - tornAt)])
            }
        }
        recovered.segment = (segments.last ?? 0) + 1
        recovered.oldestSegment = segments.first ?? recovered.segment
        let sessions = recovered.index.entries.count
        state.withLock { $0 = recovered }
        if !segments.isEmpty {
            logger.info("recovered the session index from the journal", ["sessions": .int(sessions), "records": .int(records), "bytes": .int(bytes), "segments": .int(segments.count)])
        }
    }

    /// Quarantines the session a damaged frame names (when its key is readable and known) and logs
    /// where the damage lies; the bytes stay on disk.
    func reportCorruption(_ index: inout JournalIndex, path: String, offset: Int, damage: String, frame: UnsafeRawBufferPointer, skipped: Int) {
        let reason = "the journal record at \(path) offset \(offset) \(damage); history after it cannot be trusted"
        let key = frame.count >= JournalRecord.frameBytes + 5 ? frame.loadLittleEndian(UInt32.self, at: JournalRecord.frameBytes + 1) : nil
        var fields: LogFields = ["path": .string(path), "offset": .int(offset), "damage": .string(damage), "skipped_bytes": .int(skipped)]
        if let key, let entry = index.entries[key] {
            entry.unavailable = reason
            fields.append("session", .string(entry.id))
            logger.error("a damaged journal record; its session is quarantined and the bytes are kept", fields)
        } else {
            logger.error("a damaged journal record of no known session; the bytes are kept and skipped", fields)
        }
    }

    /// The offset of the next well-formed record after a bad one, or nil when none follows.
    static func nextRecord(in raw: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + JournalRecord.frameBytes + JournalRecord.headerBytes <= raw.count {
            let rest = UnsafeRawBufferPointer(rebasing: raw[candidate...])
            let length = Int(rest.loadLittleEndian(UInt32.self, at: 0))
            if length >= JournalRecord.headerBytes, length <= rest.count - JournalRecord.frameBytes, JournalRecord.Kind(rawValue: rest[8]) != nil,
                case .record = JournalRecord.parse(rest, withPayload: false)
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }
}
