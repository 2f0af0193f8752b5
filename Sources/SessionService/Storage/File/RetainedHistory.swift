/// Where the records lie that rebuild a session's newest versions for time travel and forks
/// (``HistoryLimits``): a base snapshot at or below the oldest version kept, then every later
/// snapshot and state record, in version order (a version's state record before its snapshot).
/// Compaction copies them forward like the rest of the session's data, so its reach survives it.
///
/// Appends in version order cost O(1); trimming drops the records before a newer base once the oldest
/// version kept passes it, or while they hold more than the byte limit (amortized O(1) per record);
/// the latest snapshot and what follows always stay. A copy (same version and kind) replaces its
/// original's location (a state record replaces any of its version); a record older than the base is
/// not kept.
///
/// ```swift
/// var history = RetainedHistory()
/// let limits = HistoryLimits(versions: 100, bytes: 1 << 20)
/// history.keep(.snapshot, 0, at: location, version: 0, limits: limits)
/// history.keep(.mutation, 1, at: next, version: 1, limits: limits)
/// history.oldestSegment   // where the base snapshot lies
/// ```
struct RetainedHistory: Sendable {
    /// The records, oldest first from `start`.
    private(set) var records: [TailRecord] = []
    private(set) var start = 0
    /// The versions of the retained snapshots, ascending (the base first).
    private var snapshots: [UInt64] = []
    /// How many retained records lie in each segment, by segment ascending, none at zero.
    private var segments: [(segment: UInt32, count: Int)] = []
    /// Bytes of the retained records, as framed on disk.
    private(set) var bytes = 0

    /// The retained records, oldest first.
    var retained: ArraySlice<TailRecord> { records[start...] }

    /// Whether nothing is retained (history is off, or the session has none yet).
    var isEmpty: Bool { start == records.count }

    /// The oldest segment holding a retained record.
    var oldestSegment: UInt32? { segments.first?.segment }

    /// The version of the base snapshot: every version from it to the newest can be rebuilt.
    var baseVersion: UInt64? { snapshots.first }

    /// Keeps a snapshot or state record of version `number`; `version` is the session's newest version.
    /// Returns whether ``oldestSegment`` may have changed.
    @discardableResult
    mutating func keep(
        _ kind: RecordKind, _ number: UInt64, at location: RecordLocation, version: UInt64,
        limits: HistoryLimits
    ) -> Bool {
        let record = TailRecord(kind: kind, number: number, location: location)
        let oldest = oldestSegment
        if isEmpty {
            // History begins with a snapshot.
            guard kind == .snapshot else { return false }
            append(record)
        } else if Self.order(records[records.count - 1], record) {
            append(record)
        } else {
            let index = insertionIndex(record)
            if index < records.count, !Self.order(record, records[index]) {
                // A copy: the original's place is taken (of a state record of the same version, the
                // later one counts, as in a replay).
                count(records[index].location, -1)
                bytes -= Int(records[index].location.length)
                records[index] = record
                count(location, 1)
                bytes += Int(location.length)
            } else if index > start {
                // Between the base and the newest (a copy made while the session went on, read back in
                // the order it was written).
                records.insert(record, at: index)
                count(location, 1)
                bytes += Int(location.length)
                if kind == .snapshot {
                    snapshots.insert(number, at: snapshots.firstIndex { $0 > number } ?? snapshots.count)
                }
            } else {
                // Older than the base: not needed for the versions kept.
                return false
            }
        }
        trim(version: version, limits: limits)
        return oldestSegment != oldest
    }

    /// Whether `first` comes before `second`: by version, a state record before the snapshot of its version.
    static func order(_ first: TailRecord, _ second: TailRecord) -> Bool {
        (first.number, first.kind == .snapshot ? 1 : 0) < (second.number, second.kind == .snapshot ? 1 : 0)
    }

    private mutating func append(_ record: TailRecord) {
        records.append(record)
        count(record.location, 1)
        bytes += Int(record.location.length)
        if record.kind == .snapshot { snapshots.append(record.number) }
    }

    /// Where `record` goes among the retained records (the first not ordered before it).
    private func insertionIndex(_ record: TailRecord) -> Int {
        var low = start
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            if Self.order(records[middle], record) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Drops the records before the newest snapshot at or below the oldest version kept, and then
    /// before later snapshots while more than the byte limit is kept.
    private mutating func trim(version: UInt64, limits: HistoryLimits) {
        let oldestKept = version >= limits.versions ? version - limits.versions + 1 : 0
        while snapshots.count >= 2, snapshots[1] <= oldestKept || bytes > limits.bytes {
            let base = snapshots[1]
            while start < records.count, !(records[start].kind == .snapshot && records[start].number == base) {
                count(records[start].location, -1)
                bytes -= Int(records[start].location.length)
                start += 1
            }
            snapshots.removeFirst()
        }
        // Drop the dead prefix now and then, so trimming stays O(1) amortized.
        if start >= 64, start * 2 >= records.count {
            records.removeFirst(start)
            start = 0
        }
    }

    /// Counts a record in (or, with -1, out of) the segment it lies in.
    private mutating func count(_ location: RecordLocation, _ change: Int) {
        if change > 0, let last = segments.last, last.segment == location.segment {
            segments[segments.count - 1].count += 1
            return
        }
        let index = segments.firstIndex { $0.segment >= location.segment } ?? segments.count
        if index < segments.count, segments[index].segment == location.segment {
            segments[index].count += change
            if segments[index].count == 0 { segments.remove(at: index) }
        } else if change > 0 {
            segments.insert((location.segment, change), at: index)
        }
    }
}

/// How much past history each session keeps for time travel: its newest `versions` versions, within
/// `bytes` of records (`storage.historyVersions`, `storage.historyBytes`); either at 0 turns it off
/// (the latest snapshot and what follows it are kept regardless).
struct HistoryLimits: Sendable, Equatable {
    var versions: UInt64 = 100
    var bytes = 1 << 20

    /// Whether any history is kept beyond the latest snapshot.
    var isOn: Bool { versions > 0 && bytes > 0 }
}
