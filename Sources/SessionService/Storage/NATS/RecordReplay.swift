import NATS

/// A session's subject read back, message after message, into what resuming it needs: its latest
/// snapshot, the records after it, its latest complete action-log checkpoint and the accept records
/// of its retained action log, kept by the rules the file journal's index keeps them by
/// (``IndexEntry``). ``history()`` then merges them the file journal's way.
struct RecordReplay {
    let limits: ActionLogLimits
    private var assembler = RecordAssembler()
    private var snapshot: StoredRecord?
    private var tail: [StoredRecord] = []
    private var version: UInt64 = 0
    private var accepts: [StoredRecord] = []
    private var acceptBytes = 0
    private var actionLog: [StoredRecord] = []
    private var actionLogSeq: UInt64 = 0
    private var chunks: [StoredRecord]?
    private var damage: RecordDamage?
    /// The sequence of the last message read.
    private(set) var lastSequence: UInt64 = 0
    /// Messages read.
    private(set) var messages = 0

    init(limits: ActionLogLimits) {
        self.limits = limits
    }

    /// Adds the records of one message.
    mutating func add(_ message: StoredMessage) -> Result<Void, RecordDamage> {
        lastSequence = message.sequence
        messages += 1
        switch assembler.add(message.payload, sequence: message.sequence) {
        case .failure(let damage):
            return .failure(damage)
        case .success(let records):
            for record in records { apply(record) }
            return .success(())
        }
    }

    /// The replay of a subject found damaged: its history is unavailable, saying why.
    func damaged(_ damage: RecordDamage) -> RecordReplay {
        var copy = self
        copy.damage = damage
        return copy
    }

    private mutating func apply(_ record: StoredRecord) {
        switch record.kind {
        case .snapshot:
            if let snapshot, record.number < snapshot.number { return }
            snapshot = record
            version = max(version, record.number)
            tail.removeAll {
                $0.kind == .accept || $0.kind == .complete || $0.kind == .timer || $0.number <= record.number
            }
        case .mutation, .forced:
            guard record.number > (snapshot?.number ?? 0) || snapshot == nil else { return }
            if record.number <= version,
                let same = tail.lastIndex(where: { $0.kind == record.kind && $0.number == record.number })
            {
                tail[same] = record
            } else {
                tail.append(record)
            }
            version = max(version, record.number)
        case .accept:
            retain(accept: record)
            tail.append(record)
        case .complete:
            tail.append(record)
        case .timer:
            // A record read again (a publish retried) keeps its first place.
            if !tail.contains(where: { $0.kind == .timer && $0.number == record.number }) { tail.append(record) }
        case .actionLogFirst:
            chunks = [record]
        case .actionLogNext:
            chunks?.append(record)
        case .actionLogEnd:
            if let chunks, record.number >= actionLogSeq {
                actionLog = chunks
                actionLogSeq = record.number
                accepts.removeAll { $0.number <= record.number }
                acceptBytes = accepts.reduce(0) { $0 + Self.actionBytes($1) }
            }
            chunks = nil
        case .fence:
            break
        case .delete, .actionLog, .padding, .accessToken:
            break  // file-only kinds: the frame parser refuses them, so none reaches a replay
        }
    }

    /// Keeps the newest accepts within both limits, as the action log does.
    private mutating func retain(accept: StoredRecord) {
        guard limits.count > 0, accept.number > actionLogSeq else { return }
        if let same = accepts.lastIndex(where: { $0.number == accept.number }) {
            accepts[same] = accept
            return
        }
        accepts.append(accept)
        acceptBytes += Self.actionBytes(accept)
        var evicted = false
        while !accepts.isEmpty, accepts.count > limits.count || acceptBytes > limits.bytes {
            acceptBytes -= Self.actionBytes(accepts.removeFirst())
            evicted = true
        }
        // Once an accept had to go, or the accepts alone fill the log, the checkpoint's older entries are out too.
        if !actionLog.isEmpty, evicted || accepts.count >= limits.count || acceptBytes >= limits.bytes {
            actionLog = []
        }
    }

    private static func actionBytes(_ accept: StoredRecord) -> Int {
        max(0, accept.payload.count - StoredAccept.headerBytes)
    }

    /// The session as its records describe it, merged the file journal's way; why not, when they do
    /// not describe one (no snapshot, a version missing, a damaged record).
    func history() -> Result<StoredHistory, FileJournal.LoadFailure> {
        if let damage { return .failure(.unavailable("its records cannot be read back: \(damage)")) }
        guard let snapshot, let snapshotRecord = snapshot.journalRecord else {
            return .failure(
                .unavailable(messages == 0 ? "its records are missing from the stream" : "its records hold no snapshot")
            )
        }
        let records = FileJournal.StoredRecords(
            key: 0, snapshot: snapshotRecord, tail: tail.compactMap(\.journalRecord),
            actionLog: actionLog.compactMap(\.journalRecord),
            accepts: accepts.compactMap(\.journalRecord))
        return FileJournal.history(records)
    }

    /// The records that rebuild version `version` from `records` (a whole subject, oldest first):
    /// the newest snapshot at or below it and the state records after it; nil when no snapshot that
    /// old is left, or a version between is missing.
    static func versionHistory(_ records: [StoredRecord], upTo version: UInt64) -> StoredVersionHistory? {
        guard
            let base = records.filter({ $0.kind == .snapshot && $0.number <= version }).max(by: {
                $0.number < $1.number
            }),
            let snapshot = try? StoredSnapshot(version: base.number, payload: base.payload)
        else { return nil }
        var byVersion: [UInt64: StoredRecord] = [:]
        for record in records
        where (record.kind == .mutation || record.kind == .forced) && record.number > base.number
            && record.number <= version
        {
            byVersion[record.number] = record
        }
        var states: [StoredState] = []
        var next = base.number + 1
        while next <= version {
            guard let record = byVersion[next] else { return nil }
            let kind: StoredState.Kind = record.kind == .mutation ? .mutation : .forced
            states.append(StoredState(kind: kind, version: next, payload: record.payload))
            next += 1
        }
        return StoredVersionHistory(
            base: snapshot.state, states: states, params: snapshot.params,
            baseStorageVersion: snapshot.storageVersion)
    }
}
