/// Where a record lies: segment number, byte offset, framed length.
struct RecordLocation: Sendable, Equatable {
    var segment: UInt32
    var offset: UInt32
    var length: UInt32
}

/// A record after a session's latest snapshot, kept for sessions that are not in memory.
struct TailRecord: Sendable, Equatable {
    var kind: JournalRecord.Kind
    var number: UInt64
    var location: RecordLocation
}

/// What the journal knows of one stored session, without decoding any JSON.
struct IndexEntry: Sendable {
    var id: String
    var reactor: String
    var snapshot: RecordLocation
    var snapshotVersion: UInt64
    /// The highest version journaled.
    var version: UInt64
    /// The highest seq journaled.
    var lastSeq: UInt64
    /// Records after the snapshot; maintained only while the session is not resident.
    var tail: [TailRecord] = []
    /// The oldest segment holding a record written after the snapshot.
    var firstTailSegment: UInt32?
    var resident: Bool
    /// Why the session cannot be served (quarantine), nil when fine.
    var unavailable: String?

    /// The oldest segment this session needs.
    var oldestSegment: UInt32 { min(snapshot.segment, firstTailSegment ?? .max) }
}

/// Every stored session by key and id, and how many sessions need each segment.
struct JournalIndex: Sendable {
    var entries: [UInt32: IndexEntry] = [:]
    var keys: [String: UInt32] = [:]
    var nextKey: UInt32 = 1
    /// Segment → number of sessions whose oldest needed record lies in it.
    var pins: [UInt32: Int] = [:]

    /// Applies one record, as appended now or found by the start-up scan.
    mutating func apply(kind: JournalRecord.Kind, key: UInt32, number: UInt64, location: RecordLocation, identity: (id: String, reactor: String)?) {
        nextKey = max(nextKey, key &+ 1)
        if kind == .delete {
            guard let entry = entries.removeValue(forKey: key) else { return }
            unpin(entry.oldestSegment)
            if keys[entry.id] == key { keys.removeValue(forKey: entry.id) }
            return
        }
        if kind == .snapshot {
            guard var entry = entries[key] else {
                // A snapshot of an unknown key starts a session (creation, or the scan's first sight of it).
                guard let identity else { return }
                if let previous = keys[identity.id], previous != key, let old = entries.removeValue(forKey: previous) {
                    unpin(old.oldestSegment)
                }
                keys[identity.id] = key
                entries[key] = IndexEntry(id: identity.id, reactor: identity.reactor, snapshot: location, snapshotVersion: number, version: number, lastSeq: 0, resident: false)
                pin(location.segment)
                return
            }
            guard number >= entry.snapshotVersion else { return }
            let before = entry.oldestSegment
            entry.snapshot = location
            entry.snapshotVersion = number
            entry.version = max(entry.version, number)
            // State records of later versions written before it stay; action records before it are in it.
            entry.tail.removeAll { $0.kind.isAction || $0.number <= number }
            entry.firstTailSegment = entry.tail.map(\.location.segment).min()
            entries[key] = entry
            repin(from: before, to: entry.oldestSegment)
            return
        }
        guard var entry = entries[key] else { return }
        let before = entry.oldestSegment
        // A number seen before is a compaction copy: it replaces the original.
        var repeated = kind == .complete
        switch kind {
        case .mutation, .forced:
            guard number > entry.snapshotVersion else { return }
            repeated = number <= entry.version
            entry.version = max(entry.version, number)
        case .accept:
            repeated = number <= entry.lastSeq
            entry.lastSeq = max(entry.lastSeq, number)
        default:
            break
        }
        if !entry.resident {
            let record = TailRecord(kind: kind, number: number, location: location)
            if repeated, let same = entry.tail.lastIndex(where: { $0.kind == kind && $0.number == number }) {
                entry.tail[same] = record
                entry.firstTailSegment = entry.tail.map(\.location.segment).min()
            } else {
                entry.tail.append(record)
                entry.firstTailSegment = min(entry.firstTailSegment ?? .max, location.segment)
            }
        } else if entry.firstTailSegment == nil {
            entry.firstTailSegment = location.segment
        }
        entries[key] = entry
        repin(from: before, to: entry.oldestSegment)
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

extension JournalRecord.Kind {
    /// Records of the action log (positional), as opposed to state records (by version).
    var isAction: Bool { self == .accept || self == .complete }
}
