import Logs
import Posix

#if canImport(Glibc)
    import Glibc
#endif

// Start-up: a ``JournalScanner`` reads the segments and rebuilds the index; the journal cuts a torn
// tail, logs what the scan found and installs the result.
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

    /// Scans every segment, oldest first, and installs the index it rebuilt.
    func scan() throws(IOError) {
        let segments = try segmentNumbers()
        var scanner = JournalScanner(options: options)
        for segment in segments {
            let path = segmentPath(segment)
            let data = try JournalFiles.readAll(path)
            if let tornAt = scanner.read(data, segment: segment, path: path, newest: segment == segments.last) {
                try cutTornTail(path: path, at: tornAt, size: data.count)
            }
        }
        for (damage, unfinishedErasure) in scanner.settleDamage() {
            log(damage, unfinishedErasure: unfinishedErasure)
        }
        let recovered = scanner.finished(segments: segments)
        state.withLock { $0 = recovered }
        logSummary(of: scanner, segments: segments.count)
    }

    /// Cuts the newest segment at `tornAt`, where a write cut short begins (a read-only journal only reads
    /// up to it: a server may be writing it now).
    private func cutTornTail(path: String, at tornAt: Int, size: Int) throws(IOError) {
        if options.readOnly {
            logger.info(
                "the newest journal segment ends inside a record (a server writing it now, or one that stopped "
                    + "mid-write); reading up to it",
                ["path": .string(path), "kept_bytes": .int(tornAt)])
            return
        }
        let fd = try Posix.open(path, O_WRONLY | O_CLOEXEC)
        defer { Posix.close(fd) }
        do { try Posix.ftruncate(fd, tornAt) } catch { throw error.about(path) }
        logger.warning(
            "cut off an incomplete record at the end of the newest journal segment: the server stopped, or the "
                + "machine lost power, in the middle of writing it (it was never acknowledged)",
            ["path": .string(path), "kept_bytes": .int(tornAt), "dropped_bytes": .int(size - tornAt)])
    }

    /// Logs a damaged frame the scan found: an erasure cut short, or corruption (of a session or of none).
    private func log(_ damage: JournalScanner.Damage, unfinishedErasure: Bool) {
        if unfinishedErasure {
            logger.notice(
                "a deleted session's record was being erased when the server stopped; the erasure is finished now",
                damage.fields)
        } else if let session = damage.session {
            var fields = damage.fields
            fields.append("session", .string(session))
            logger.error("a damaged journal record; its session is quarantined and the bytes are kept", fields)
        } else {
            logger.error("a damaged journal record of no known session; the bytes are kept and skipped", damage.fields)
        }
    }

    /// The start-up summary: what was read, and erasures still to do.
    private func logSummary(of scanner: JournalScanner, segments: Int) {
        let recovered = scanner.recovered
        if segments > 0 {
            logger.info(
                "recovered the session index from the journal",
                [
                    "sessions": .int(recovered.index.entries.count), "records": .int(scanner.records),
                    "bytes": .int(scanner.bytes), "segments": .int(segments),
                ])
        }
        if recovered.erasures.count + recovered.unfinishedErasures.count > 0 {
            logger.notice(
                "deleted sessions' records are still on disk; they are erased in the background",
                ["sessions": .int(recovered.erasures.count), "records": .int(recovered.unfinishedErasures.count)])
        }
    }
}
