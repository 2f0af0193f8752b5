import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// A deleted session whose records are still to be overwritten.
struct Erasure: Sendable, Equatable {
    /// The oldest segment that may hold one of its records.
    var firstSegment: UInt32
    /// The segment holding its delete record, which must be on disk before any record is erased.
    var deleteSegment: UInt32
}

// Erasing deleted sessions: their records are overwritten in place, in the background, instead of
// staying readable until compaction happens to delete their segments.
extension FileJournal {
    /// Overwrites every record of the sessions deleted since the last run with a padding record of the
    /// same length (zero key, number and payload, a valid checksum), so the segments keep their shape
    /// and nothing of those sessions can be read back. Runs in the background (storage maintenance,
    /// every few seconds); the work is one read of each segment from the oldest one a deleted session
    /// used, however many sessions were deleted.
    ///
    /// Crash-safe: the delete records are synced first, so an erasure never outlives a deletion a
    /// crash forgot; payloads are zeroed and synced before headers change, and the start-up scan
    /// finishes an erasure a stop interrupted (a frame of a deleted session, or one already marked as
    /// padding, whose checksum fails) instead of reporting it as corruption.
    func eraseDeletedSessions() {
        let (work, unfinished) = state.withLock { state -> ([UInt32: Erasure], [RecordLocation]) in
            defer {
                state.erasures = [:]
                state.unfinishedErasures = []
            }
            return (state.erasures, state.unfinishedErasures)
        }
        guard !work.isEmpty || !unfinished.isEmpty else { return }
        var retry: [UInt32: Erasure] = [:]
        var retryUnfinished: [RecordLocation] = []
        var erased = 0
        var bytes = 0
        do throws(IOError) {
            flush()
            for segment in Set(work.values.map(\.deleteSegment)) {
                let fd = try Posix.open(segmentPath(segment), O_RDONLY | O_CLOEXEC)
                defer { Posix.close(fd) }
                do { try Posix.fdatasync(fd) } catch { throw error.about(segmentPath(segment)) }
            }
            let oldest = min(work.values.map(\.firstSegment).min() ?? .max, unfinished.map(\.segment).min() ?? .max)
            for segment in try segmentNumbers() where segment >= oldest {
                let targets = try records(in: segment, of: work) + unfinished.filter { $0.segment == segment }
                guard !targets.isEmpty else { continue }
                do {
                    try overwrite(segment, targets)
                    erased += targets.count
                    // Every byte of each record is overwritten: its payload with zeros, then its header.
                    let overwritten = targets.reduce(0) { $0 + Int($1.length) }
                    bytes += overwritten
                    metrics.writtenBytes.increment(by: overwritten)
                } catch {
                    // Tried again at the next run, from this segment on.
                    logger.error(
                        "cannot erase a deleted session's records; retrying later", ["error": .string("\(error)")])
                    for (key, erasure) in work where erasure.firstSegment <= segment && retry[key] == nil {
                        retry[key] = Erasure(firstSegment: segment, deleteSegment: erasure.deleteSegment)
                    }
                    retryUnfinished += unfinished.filter { $0.segment == segment }
                }
            }
        } catch {
            logger.error("cannot erase deleted sessions' records; retrying later", ["error": .string("\(error)")])
            retry = work
            retryUnfinished = unfinished
        }
        if !retry.isEmpty || !retryUnfinished.isEmpty {
            state.withLock { state in
                state.erasures.merge(retry) { current, _ in current }
                state.unfinishedErasures += retryUnfinished
            }
        }
        if erased > 0 {
            logger.info(
                "erased deleted sessions' records from the journal",
                ["sessions": .int(work.count), "records": .int(erased), "bytes": .int(bytes)])
        }
    }

    /// Where the records of the sessions in `work` lie in `segment` (none when it is gone).
    func records(in segment: UInt32, of work: [UInt32: Erasure]) throws(IOError) -> [RecordLocation] {
        guard !work.isEmpty else { return [] }
        let data: [UInt8]
        do {
            data = try JournalFiles.readAll(segmentPath(segment))
        } catch  where error.errno == ENOENT {
            return []  // compacted meanwhile
        }
        var found: [RecordLocation] = []
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                switch JournalRecord.parse(rest, withPayload: false) {
                case .record(let record, let size):
                    if let erasure = work[record.key], segment >= erasure.firstSegment, record.kind != .delete,
                        record.kind != .padding
                    {
                        found.append(RecordLocation(segment: segment, offset: UInt32(offset), length: UInt32(size)))
                    }
                    offset += size
                case .corrupt(_, let size?):
                    offset += size
                case .corrupt(_, nil), .truncated:
                    // Damage is the start-up scan's to report; the end of the segment may be in the middle of a write.
                    guard let next = JournalScanner.nextRecord(in: raw, after: offset) else { return }
                    offset = next
                }
            }
        }
        return found
    }

    /// Overwrites `targets` in `segment` with padding records of the same lengths: payloads first,
    /// synced, then the headers, synced, so a stop leaves frames the start-up scan recognizes.
    func overwrite(_ segment: UInt32, _ targets: [RecordLocation]) throws(IOError) {
        let path = segmentPath(segment)
        // Not O_APPEND: on Linux a pwrite on an O_APPEND descriptor appends.
        let fd = try Posix.open(path, O_WRONLY | O_CLOEXEC)
        defer { Posix.close(fd) }
        let prefix = JournalRecord.frameBytes + JournalRecord.headerBytes
        let zeros = [UInt8](repeating: 0, count: min(1 << 20, targets.map { Int($0.length) - prefix }.max() ?? 0))
        do throws(IOError) {
            for target in targets {
                var offset = Int(target.offset) + prefix
                let end = Int(target.offset) + Int(target.length)
                while offset < end {
                    let count = min(zeros.count, end - offset)
                    try Self.pwrite(fd, zeros[..<count], at: offset)
                    offset += count
                }
            }
            try Posix.fdatasync(fd)
            for target in targets {
                let header = JournalRecord.paddingHeader(size: Int(target.length))
                try Self.pwrite(fd, header[...], at: Int(target.offset))
            }
            try Posix.fdatasync(fd)
        } catch {
            throw error.about(path)
        }
    }

    static func pwrite(_ fd: Int32, _ bytes: ArraySlice<UInt8>, at offset: Int) throws(IOError) {
        // withUnsafeBytes rethrows untyped; a Result carries the typed error out.
        try bytes.withUnsafeBytes { raw in Result { () throws(IOError) in try Posix.pwriteAll(fd, raw, offset: offset) }
        }.get()
    }
}
