import Tokens

/// Where a record lies: segment number, byte offset, framed length.
struct RecordLocation: Sendable, Equatable {
    var segment: UInt32
    var offset: UInt32
    var length: UInt32
}

/// A record after a session's latest snapshot, kept for sessions that are not in memory.
struct TailRecord: Sendable, Equatable {
    var kind: RecordKind
    var number: UInt64
    var location: RecordLocation
}

/// Where one retained accept record lies.
struct AcceptLocation: Sendable, Equatable {
    var seq: UInt64
    var location: RecordLocation
}

/// What the journal knows of one stored session, without decoding any JSON. A class, mutated in place:
/// a struct in the dictionary was copied (with its arrays) on every record. Only touched under the
/// storage's state lock, which keeps every access apart: the fields each record updates skip the run-time
/// exclusivity check (`@exclusivity(unchecked)`, ~78 instructions per checked access, three per POST).
final class IndexEntry: @unchecked Sendable {
    var id: String
    var reactor: String
    var snapshot: RecordLocation
    var snapshotVersion: UInt64
    /// The highest version journaled.
    @exclusivity(unchecked) var version: UInt64
    /// The highest seq journaled.
    @exclusivity(unchecked) var lastSeq: UInt64
    /// Records after the snapshot; maintained only while the session is not resident.
    @exclusivity(unchecked) var tail: [TailRecord] = []
    /// The oldest segment holding a record written after the snapshot.
    @exclusivity(unchecked) var firstTailSegment: UInt32?
    var resident: Bool
    /// Why the session cannot be served (quarantine), nil when fine.
    var unavailable: String?
    /// At start-up: no later than its soonest pending timer (its latest snapshot's, or one scheduled since),
    /// nil when it has none; the service's timer index takes it from here (see ``FileJournal/timerHints()``).
    var timerHint: Int64?
    /// The accept records of the retained action log (the newest within `sessions.actionLogLimit` and
    /// `sessions.actionLogBytes`), oldest first from `acceptsStart`; kept whether or not the session is
    /// resident, since snapshots do not hold the log.
    @exclusivity(unchecked) var accepts: [AcceptLocation] = []
    @exclusivity(unchecked) var acceptsStart = 0
    /// Bytes of action JSON in the retained accept records.
    @exclusivity(unchecked) var acceptBytes = 0
    /// The chunks of the latest complete action-log checkpoint (older entries, copied by compaction),
    /// in order, and the seq it covers.
    @exclusivity(unchecked) var actionLog: [RecordLocation] = []
    var actionLogSeq: UInt64 = 0
    /// The snapshots and state records that rebuild its newest versions (`storage.historyVersions`),
    /// kept whether or not the session is resident; empty when history is off.
    @exclusivity(unchecked) var history = RetainedHistory()
    /// The hash of its access token and where its latest access-token record lies.
    var accessToken: (hash: SessionTokenHash, location: RecordLocation)?
    /// What its snapshots carry as ``StoredSnapshot/incarnation`` (0: written before there were any).
    var incarnation: UInt64 = 0
    /// The segment this entry is counted in (`JournalIndex.pins`): its oldest needed segment when last computed.
    @exclusivity(unchecked) var pinned: UInt32
    /// The oldest segment that may hold a record of this session (where it was created, or where the
    /// start-up scan first saw it): erasing it after its deletion looks no further back.
    let firstSegment: UInt32
    /// True once the index dropped this entry (deletion, or a newer key for its id): a session log
    /// holding it then changes nothing, as a lookup of its key would have found nothing.
    @exclusivity(unchecked) var dropped = false

    init(
        id: String, reactor: String, snapshot: RecordLocation, snapshotVersion: UInt64, version: UInt64,
        lastSeq: UInt64, resident: Bool
    ) {
        self.id = id
        self.reactor = reactor
        self.snapshot = snapshot
        self.snapshotVersion = snapshotVersion
        self.version = version
        self.lastSeq = lastSeq
        self.resident = resident
        pinned = snapshot.segment
        firstSegment = snapshot.segment
    }

    /// The retained accept records, oldest first.
    var retainedAccepts: ArraySlice<AcceptLocation> { accepts[acceptsStart...] }

    /// The oldest segment this session needs.
    var oldestSegment: UInt32 {
        min(oldestDataSegment, accessToken?.location.segment ?? .max)
    }

    /// The oldest segment holding a record of its data (anything but its access token).
    var oldestDataSegment: UInt32 {
        let accept = acceptsStart < accepts.count ? accepts[acceptsStart].location.segment : .max
        let records = min(firstTailSegment ?? .max, history.oldestSegment ?? .max)
        return min(snapshot.segment, records, accept, actionLog.first?.segment ?? .max)
    }

    /// About the bytes compaction writes to move its data forward: its snapshot (a resident session
    /// writes a fresh one), its tail (a stored session's records are copied), its retained history
    /// (copied; it holds the latest snapshot and the state records of the tail), its retained action
    /// log as a checkpoint (each entry's action with 21 bytes of bookkeeping).
    var liveBytes: Int {
        let entries = accepts.count - acceptsStart
        var bytes = acceptBytes + entries * StoredActionLog.entryHeaderBytes + history.bytes
        for chunk in actionLog { bytes += Int(chunk.length) }
        if !resident {
            for record in tail { bytes += Int(record.location.length) }
        }
        // A stored session's latest snapshot is copied once: as history when that is kept.
        if resident || history.isEmpty { bytes += Int(snapshot.length) }
        return bytes
    }

    /// The session as the admin listing and error answers show it.
    var info: StoredSessionInfo {
        StoredSessionInfo(
            id: id, reactor: reactor, version: version, resident: resident, unavailable: unavailable,
            incarnation: incarnation)
    }

    /// Applies one record of this session (not its creation or deletion), keeping its newest versions'
    /// records within `history`; returns whether its oldest needed segment may have changed.
    func apply(
        kind: RecordKind, number: UInt64, location: RecordLocation, limits: ActionLogLimits,
        history retention: HistoryLimits
    ) -> Bool {
        var moved = false
        if retention.isOn, kind == .snapshot || kind == .mutation || kind == .forced {
            moved = history.keep(kind, number, at: location, version: max(version, number), limits: retention)
        }
        return apply(kind: kind, number: number, location: location, limits: limits) || moved
    }

    /// Applies one record to the latest snapshot, tail and action log; returns whether its oldest
    /// needed segment may have changed.
    private func apply(
        kind: RecordKind, number: UInt64, location: RecordLocation, limits: ActionLogLimits
    ) -> Bool {
        if kind == .snapshot {
            guard number >= snapshotVersion else { return false }
            snapshot = location
            snapshotVersion = number
            version = max(version, number)
            // State records of later versions written before it stay; action records before it are in it.
            if !tail.isEmpty {
                tail.removeAll { $0.kind.isAction || $0.number <= number }
                firstTailSegment = tail.map(\.location.segment).min()
            } else {
                firstTailSegment = nil
            }
            return true
        }
        // A number seen before is a compaction copy: it replaces the original.
        var repeated = kind == .complete
        var moved = false
        switch kind {
        case .mutation, .forced:
            guard number > snapshotVersion else { return false }
            repeated = number <= version
            version = max(version, number)
        case .accept:
            repeated = number <= lastSeq
            lastSeq = max(lastSeq, number)
            moved = retain(accept: number, at: location, limits: limits)
        case .actionLog:
            retain(actionLog: [location], upTo: number)
            return true
        case .actionLogFirst, .actionLogNext, .actionLogEnd:
            // Gathered by the index until the checkpoint is complete.
            return false
        case .timer:
            repeated = tail.contains { $0.kind == .timer && $0.number == number }
        default:
            break
        }
        if !resident {
            let record = TailRecord(kind: kind, number: number, location: location)
            if repeated, let same = tail.lastIndex(where: { $0.kind == kind && $0.number == number }) {
                tail[same] = record
                firstTailSegment = tail.map(\.location.segment).min()
            } else {
                tail.append(record)
                firstTailSegment = min(firstTailSegment ?? .max, location.segment)
            }
            return true
        } else if firstTailSegment == nil {
            firstTailSegment = location.segment
            return true
        }
        return moved
    }

    /// Keeps an accept record's location; a seq seen before (a compaction copy) replaces the original.
    /// Keeps the newest accepts within both limits, as ``ActionLog`` does. Returns whether the oldest
    /// retained accept changed.
    @discardableResult
    func retain(accept seq: UInt64, at location: RecordLocation, limits: ActionLogLimits) -> Bool {
        guard limits.count > 0, seq > actionLogSeq else { return false }
        if let last = accepts.last, last.seq >= seq {
            if let same = accepts[acceptsStart...].lastIndex(where: { $0.seq == seq }) {
                accepts[same].location = location
            }
            return true
        }
        var moved = acceptsStart == accepts.count
        accepts.append(AcceptLocation(seq: seq, location: location))
        acceptBytes += StoredAccept.actionBytes(location)
        var evicted = false
        while acceptsStart < accepts.count, accepts.count - acceptsStart > limits.count || acceptBytes > limits.bytes {
            acceptBytes -= StoredAccept.actionBytes(accepts[acceptsStart].location)
            acceptsStart += 1
            evicted = true
        }
        moved = moved || evicted
        // Drop the dead prefix now and then, so trimming stays O(1) amortized.
        if acceptsStart >= 64, acceptsStart * 2 >= accepts.count {
            accepts.removeFirst(acceptsStart)
            acceptsStart = 0
        }
        // Once an accept had to go, or the accepts alone fill the log, every older entry (the
        // checkpoint's) is out of the log too.
        if !actionLog.isEmpty, evicted || accepts.count - acceptsStart >= limits.count || acceptBytes >= limits.bytes {
            actionLog = []
            moved = true
        }
        return moved
    }

    /// Notes a complete action-log checkpoint (its chunks) covering every entry up to `seq`.
    func retain(actionLog chunks: [RecordLocation], upTo seq: UInt64) {
        guard seq >= actionLogSeq else { return }
        actionLog = chunks
        actionLogSeq = seq
        while acceptsStart < accepts.count, accepts[acceptsStart].seq <= seq {
            acceptBytes -= StoredAccept.actionBytes(accepts[acceptsStart].location)
            acceptsStart += 1
        }
        if acceptsStart == accepts.count {
            accepts = []
            acceptsStart = 0
            acceptBytes = 0
        }
    }
}

/// Every stored session by key and id, and how many sessions need each segment.
struct JournalIndex: Sendable {
    var entries: [UInt32: IndexEntry] = [:]
    var keys: [String: UInt32] = [:]
    var nextKey: UInt32 = 1
    /// Segment → number of sessions whose oldest needed record lies in it.
    var pins: [UInt32: Int] = [:]
    /// What each session's retained action log may hold.
    var actionLogLimits = ActionLogLimits()
    /// How much of each session's past time travel reaches (`storage.historyVersions`, `storage.historyBytes`).
    var historyLimits = HistoryLimits()
    /// Chunks of action-log checkpoints being written (or cut short by a stop), by session key.
    var checkpointChunks: [UInt32: [RecordLocation]] = [:]

    /// Applies one record, as appended now or found by the start-up scan: `identity` is a snapshot's
    /// (id and reactor), `accessToken` an access-token record's hash.
    mutating func apply(
        kind: RecordKind, key: UInt32, number: UInt64, location: RecordLocation,
        identity: (id: String, reactor: String)?, accessToken: SessionTokenHash? = nil
    ) {
        nextKey = max(nextKey, key &+ 1)
        switch kind {
        case .padding:
            return
        case .accessToken:
            // A damaged hash (the scan found no readable text) takes the token away rather than keep an older one.
            guard let entry = entries[key] else { return }
            entry.accessToken = accessToken.map { ($0, location) }
            let oldest = entry.oldestSegment
            repin(from: entry.pinned, to: oldest)
            entry.pinned = oldest
            return
        case .actionLogFirst:
            checkpointChunks[key] = [location]
            return
        case .actionLogNext:
            checkpointChunks[key]?.append(location)
            return
        case .actionLogEnd:
            guard let chunks = checkpointChunks.removeValue(forKey: key), let entry = entries[key] else { return }
            entry.retain(actionLog: chunks, upTo: number)
            let oldest = entry.oldestSegment
            repin(from: entry.pinned, to: oldest)
            entry.pinned = oldest
            return
        default:
            break
        }
        if kind == .delete {
            checkpointChunks.removeValue(forKey: key)
            guard let entry = entries.removeValue(forKey: key) else { return }
            entry.dropped = true
            unpin(entry.pinned)
            if keys[entry.id] == key { keys.removeValue(forKey: entry.id) }
            return
        }
        if kind == .snapshot, entries[key] == nil {
            // A snapshot of an unknown key starts a session (creation, or the scan's first sight of it).
            guard let identity else { return }
            if let previous = keys[identity.id], previous != key, let old = entries.removeValue(forKey: previous) {
                old.dropped = true
                unpin(old.pinned)
            }
            keys[identity.id] = key
            let entry = IndexEntry(
                id: identity.id, reactor: identity.reactor, snapshot: location, snapshotVersion: number,
                version: number, lastSeq: 0, resident: false)
            if historyLimits.isOn {
                entry.history.keep(.snapshot, number, at: location, version: number, limits: historyLimits)
            }
            entries[key] = entry
            pin(location.segment)
            return
        }
        guard let entry = entries[key],
            entry.apply(kind: kind, number: number, location: location, limits: actionLogLimits, history: historyLimits)
        else { return }
        let oldest = entry.oldestSegment
        repin(from: entry.pinned, to: oldest)
        entry.pinned = oldest
    }

    /// `apply` for a session's own record (accept, state, completion, timer) when the caller holds the entry
    /// of its key: the same effect without hashing the key (two lookups per action, ~115 instructions each).
    mutating func apply(kind: RecordKind, to entry: IndexEntry, key: UInt32, number: UInt64, location: RecordLocation) {
        nextKey = max(nextKey, key &+ 1)
        guard !entry.dropped,
            entry.apply(kind: kind, number: number, location: location, limits: actionLogLimits, history: historyLimits)
        else { return }
        let oldest = entry.oldestSegment
        repin(from: entry.pinned, to: oldest)
        entry.pinned = oldest
    }

    mutating func pin(_ segment: UInt32) { pins[segment, default: 0] += 1 }

    mutating func unpin(_ segment: UInt32) {
        let count = (pins[segment] ?? 1) - 1
        pins[segment] = count > 0 ? count : nil
    }

    mutating func repin(from before: UInt32, to after: UInt32) {
        guard before != after else { return }
        unpin(before)
        pin(after)
    }
}

/// How much of each session's action log the journal keeps: entries and bytes of action JSON.
struct ActionLogLimits: Sendable {
    var count = 10_000
    var bytes = 4 << 20
}
