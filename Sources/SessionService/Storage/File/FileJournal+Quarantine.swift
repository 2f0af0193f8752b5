import Posix

// A quarantined session in the journal: lifting the quarantine, and its action log read without loading it.
extension FileJournal {
    func liftQuarantine(_ id: String) {
        state.withLock { state in
            guard let key = state.index.keys[id] else { return }
            state.index.entries[key]?.unavailable = nil
        }
    }

    /// Reads the session's records back as a load does, whatever its quarantine, without making it
    /// resident: only what they say is returned, no reactor code runs.
    func storedActionLog(of id: String) throws(StorageReadError) -> [ActionLogEntry]? {
        let read = writer.writtenOut { _ -> Result<StoredRecords, StorageReadError>? in
            state.withLock { state in
                guard let key = state.index.keys[id], let entry = state.index.entries[key] else { return nil }
                var reader = SegmentReader(storage: self)
                defer { reader.close() }
                do throws(JournalError) {
                    let snapshot = try reader.read(entry.snapshot)
                    // The tail too: its accept and complete records say which actions a stop interrupted.
                    let tail = try entry.tail.map { (record) throws(JournalError) in try reader.read(record.location) }
                    let actionLog = try entry.actionLog.map { (chunk) throws(JournalError) in try reader.read(chunk) }
                    let accepts = try entry.retainedAccepts.map { (accept) throws(JournalError) in
                        try reader.read(accept.location)
                    }
                    return .success(
                        StoredRecords(key: key, snapshot: snapshot, tail: tail, actionLog: actionLog, accepts: accepts))
                } catch {
                    return .failure(StorageReadError(reason: "its journal cannot be read back: \(error)"))
                }
            }
        }
        guard let read else { return nil }
        switch read {
        case .failure(let error): throw error
        case .success(let records):
            switch Self.history(records) {
            case .success(let history): return history.actions
            case .failure(let failure): throw StorageReadError(reason: failure.reason)
            }
        }
    }
}
