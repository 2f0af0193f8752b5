import Posix

#if canImport(Glibc)
    import Glibc
#endif

// Time travel: the records that rebuild a past version, from the index's retained history
// (`storage.historyVersions`) or, for older versions, from whatever is still on disk.
extension FileJournal {
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
            } catch  where error.errno == ENOENT {
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
                    let kind = header.kind
                    if header.key == key, kind == .snapshot || kind == .mutation || kind == .forced,
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

    /// The records to replay version `version` of session `id`; nil when it is older than the retained
    /// history. Read from the index's retained history when it reaches that far (only those records
    /// are read); otherwise every segment is searched for what is still on disk.
    func history(of id: String, upTo version: UInt64) throws(StorageReadError) -> StoredVersionHistory? {
        guard let key = key(for: id) else { return nil }
        if let found = indexedHistory(key, upTo: version) { return found }
        let all: [JournalRecord]
        do {
            all = try records(key: key)
        } catch {
            throw StorageReadError(reason: "\(error)")
        }
        let snapshots = all.filter { $0.kind == .snapshot && $0.number <= version }
        guard let base = snapshots.max(by: { $0.number < $1.number }),
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
        return StoredVersionHistory(
            base: snapshot.state, states: states, params: snapshot.params,
            baseStorageVersion: snapshot.storageVersion)
    }

    /// The oldest version of session `id` that can still be rebuilt.
    func oldestRetainedVersion(of id: String) -> UInt64? {
        guard let key = key(for: id), let all = try? records(key: key) else { return nil }
        return all.filter { $0.kind == .snapshot }.map(\.number).min()
    }

    /// Version `version` rebuilt from the records the index retains for it, nil when it does not reach
    /// that far or a record cannot be read back now (a compaction deleted its segment meanwhile).
    func indexedHistory(_ key: UInt32, upTo version: UInt64) -> StoredVersionHistory? {
        flush()
        let records = state.withLock { state -> [TailRecord]? in
            guard let retained = state.index.entries[key]?.history.retained,
                let base = retained.lastIndex(where: { $0.kind == .snapshot && $0.number <= version })
            else { return nil }
            let states = retained[(base + 1)...].prefix { $0.number <= version }.filter { $0.kind != .snapshot }
            return [retained[base]] + states
        }
        guard let records, let base = records.first else { return nil }
        var reader = SegmentReader(storage: self)
        defer { reader.close() }
        do {
            let snapshot = try StoredSnapshot(version: base.number, payload: try reader.read(base.location).payload)
            var states: [StoredState] = []
            states.reserveCapacity(records.count - 1)
            for record in records.dropFirst() {
                guard record.number == base.number + UInt64(states.count) + 1,
                    let state = try reader.read(record.location).storedState
                else { return nil }
                states.append(state)
            }
            guard base.number + UInt64(states.count) == version else { return nil }
            return StoredVersionHistory(
                base: snapshot.state, states: states, params: snapshot.params,
                baseStorageVersion: snapshot.storageVersion)
        } catch {
            return nil
        }
    }
}
