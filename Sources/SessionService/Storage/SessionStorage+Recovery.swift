import Posix

#if canImport(Glibc)
import Glibc
#endif

// Start-up: rebuild the index of sessions from the journal's record headers, truncating a torn tail and
// quarantining the sessions that corrupt records belong to.
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
        recovered.index.actionLogLimit = options.actionLogLimit
        var records = 0
        var bytes = 0
        for segment in segments {
            let path = segmentPath(segment)
            let data = try JournalFiles.readAll(path)
            bytes += data.count
            let end = data.withUnsafeBytes { raw -> Int in
                var offset = 0
                while offset < raw.count {
                    let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    switch JournalRecord.parse(rest, withPayload: false) {
                    case .record(let record, let size):
                        let identity = record.kind == .snapshot ? StoredSnapshot.identity(payload: UnsafeRawBufferPointer(rebasing: rest[(JournalRecord.frameBytes + JournalRecord.headerBytes)..<size])) : nil
                        let location = RecordLocation(segment: segment, offset: UInt32(offset), length: UInt32(size))
                        recovered.index.apply(kind: record.kind, key: record.key, number: record.number, location: location, identity: identity)
                        if record.kind == .snapshot { recovered.index.entries[record.key]?.unavailable = nil }
                        records += 1
                        offset += size
                    case .truncated, .corrupt:
                        guard let next = Self.nextRecord(in: raw, after: offset) else { return offset }
                        let key = rest.count >= 13 ? rest.loadLittleEndian(UInt32.self, at: 9) : 0
                        let reason = "the journal record at \(path) offset \(offset) fails its checksum; history after it cannot be trusted"
                        if recovered.index.entries[key] != nil {
                            recovered.index.entries[key]?.unavailable = reason
                            logger.error("a corrupt journal record; its session is quarantined", ["session": .string(recovered.index.entries[key]?.id ?? "?"), "path": .string(path), "offset": .int(offset)])
                        } else {
                            logger.error("a corrupt journal record of no known session was skipped", ["path": .string(path), "offset": .int(offset), "skipped_bytes": .int(next - offset)])
                        }
                        offset = next
                    }
                }
                return offset
            }
            if end < data.count {
                let fd = try Posix.open(path, O_WRONLY | O_CLOEXEC)
                defer { Posix.close(fd) }
                do { try Posix.ftruncate(fd, end) } catch { throw error.about(path) }
                logger.warning("truncated a torn journal tail (a crash interrupted a write)", ["path": .string(path), "kept_bytes": .int(end), "dropped_bytes": .int(data.count - end)])
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

    /// The offset of the next well-formed record after a bad one, or nil when none follows (a torn tail).
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
