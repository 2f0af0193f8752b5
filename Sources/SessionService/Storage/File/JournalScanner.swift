import Logs
import Tokens

/// The start-up scan of the journal's segments, oldest first: rebuilds the session index from record
/// headers, notes where deleted sessions' records still lie, finds a torn tail and damaged frames. It
/// reads bytes and touches no file and no log: ``FileJournal`` cuts the tail, logs what was found and
/// installs ``recovered``. Only a write cut short at the very end of the newest segment is a torn tail;
/// every other bad frame is corruption: kept on disk, reported with its place, its session quarantined.
struct JournalScanner {
    /// What the scan rebuilt so far: the index, segment sizes, erasures still to do.
    private(set) var recovered = FileJournal.State()
    /// Records and bytes read, for the start-up summary.
    private(set) var records = 0
    private(set) var bytes = 0
    /// Where each live session's records begin (the segment), for erasures.
    private var firstSeen: [UInt32: UInt32] = [:]
    /// Sessions whose delete record was read.
    private var deleted = Set<UInt32>()
    /// Damaged frames, judged once the whole journal is read (a frame an erasure was overwriting is not
    /// corruption).
    private var damaged: [Damage] = []

    init(options: FileJournal.Options) {
        recovered.index.actionLogLimits = ActionLogLimits(count: options.actionLogLimit, bytes: options.actionLogBytes)
        recovered.index.historyLimits = options.history
    }

    /// Reads one segment's bytes; the offset where a torn tail begins (only ever in the `newest` segment),
    /// nil when the segment ends on a whole record.
    mutating func read(_ data: [UInt8], segment: UInt32, path: String, newest: Bool) -> Int? {
        bytes += data.count
        let tornAt = data.withUnsafeBytes { raw -> Int? in
            var offset = 0
            while offset < raw.count {
                let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                let damage: String
                var size: Int?
                switch JournalRecord.parse(rest, withPayload: false) {
                case .record(let record, let size):
                    index(record, frame: rest, size: size, segment: segment, offset: offset)
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
                    Self.quarantine(
                        &recovered.index, path: path, segment: segment, offset: offset, size: size, damage: damage,
                        frame: rest, skipped: (next ?? raw.count) - offset))
                offset = next ?? raw.count
            }
            return nil
        }
        recovered.segmentSizes[segment] = tornAt ?? data.count
        return tornAt
    }

    /// Indexes one well-formed record whose frame (`size` bytes, at `offset` of `segment`) starts `frame`.
    private mutating func index(
        _ record: JournalRecord, frame: UnsafeRawBufferPointer, size: Int, segment: UInt32, offset: Int
    ) {
        let payload = UnsafeRawBufferPointer(
            rebasing: frame[(JournalRecord.frameBytes + JournalRecord.headerBytes)..<size])
        let location = RecordLocation(segment: segment, offset: UInt32(offset), length: UInt32(size))
        let identity = record.kind == .snapshot ? StoredSnapshot.identity(payload: payload) : nil
        let accessToken =
            record.kind == .accessToken ? SessionTokenHash(storedText: String(decoding: payload, as: UTF8.self)) : nil
        recovered.index.apply(
            kind: record.kind, key: record.key, number: record.number, location: location, identity: identity,
            accessToken: accessToken)
        noteTimers(record, payload: payload, location: location)
        noteErasure(record, segment: segment)
        records += 1
    }

    /// Keeps a session's incarnation and its earliest timer as its snapshot and timer records say.
    private mutating func noteTimers(_ record: JournalRecord, payload: UnsafeRawBufferPointer, location: RecordLocation)
    {
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
    }

    /// Notes where a session's records begin and, at its delete record, the erasure that is due.
    private mutating func noteErasure(_ record: JournalRecord, segment: UInt32) {
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
    }

    /// Judges the damage found, once every segment is read: a frame of a deleted session, or one already
    /// marked as padding, is an erasure cut short (to finish, its session's quarantine lifted); the
    /// rest is corruption. Each damage with whether it was an erasure cut short, for the log.
    mutating func settleDamage() -> [(damage: Damage, unfinishedErasure: Bool)] {
        damaged.map { damage in
            // Overwriting in place keeps a frame's length; a stop in the middle leaves a frame of a
            // deleted session, or one already marked as padding, whose checksum fails.
            guard let location = damage.location,
                damage.kind == RecordKind.padding.rawValue || damage.key.map(deleted.contains) == true
            else { return (damage, false) }
            recovered.unfinishedErasures.append(location)
            if let key = damage.key, let entry = recovered.index.entries[key], entry.unavailable == damage.reason {
                entry.unavailable = nil
            }
            return (damage, true)
        }
    }

    /// The state to install, once the scan has read `segments` (oldest first): appends go to a new segment.
    func finished(segments: [UInt32]) -> FileJournal.State {
        var state = recovered
        state.buffer.segment = (segments.last ?? 0) + 1
        state.oldestSegment = segments.first ?? state.buffer.segment
        return state
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
    static func quarantine(
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
