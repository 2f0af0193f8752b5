/// A session's action log: the newest entries, oldest first, in `seq` order, at most `limit` of them
/// and at most `byteLimit` bytes of action JSON. It always holds the longest run of newest entries
/// within both limits, so the journal rebuilds exactly the same log after a restart; an action larger
/// than `byteLimit` on its own leaves the log empty.
public struct ActionLog: Sendable {
    /// A ring: the entries lie from `head`, wrapping around; slots outside hold empty placeholders.
    @usableFromInline var entries: [ActionLogEntry] = []
    // 32-bit: part of every resident session (the configured limit is at most 10,000,000).
    @usableFromInline var storedHead: Int32 = 0
    @usableFromInline var storedCount: Int32 = 0
    @usableFromInline let storedLimit: Int32
    /// Bytes of action JSON held.
    @usableFromInline var bytes = 0
    @usableFromInline let byteLimit: Int

    @inlinable var head: Int {
        get { Int(storedHead) }
        set { storedHead = Int32(truncatingIfNeeded: newValue) }
    }

    @inlinable var limit: Int { Int(storedLimit) }

    public init(limit: Int, byteLimit: Int = .max) {
        storedLimit = Int32(clamping: limit)
        self.byteLimit = byteLimit
    }

    /// Records an entry; callers append in `seq` order. Drops the oldest beyond either limit. The entry is
    /// taken over (`consuming`): borrowed, it was copied into the log and the caller's destroyed, ~140
    /// instructions per action.
    @inlinable
    public mutating func append(_ entry: consuming ActionLogEntry) {
        guard limit > 0 else { return }
        let size = entry.action.count
        guard size <= byteLimit else {
            removeAll()
            return
        }
        while count > 0, count >= limit || bytes + size > byteLimit { removeFirst() }
        bytes += size
        if count < entries.count {
            entries[(head + count) % entries.count] = entry
        } else if head == 0 {
            entries.append(entry)
        } else {
            // Full storage that wraps: straighten it, then grow.
            entries = Array(entries[head...] + entries[..<head])
            head = 0
            entries.append(entry)
        }
        storedCount += 1
    }

    /// Drops the oldest entry, releasing its bytes.
    @inlinable
    mutating func removeFirst() {
        bytes -= entries[head].action.count
        entries[head] = ActionLogEntry(seq: 0, at: 0, action: [], stubbed: false)
        head = (head + 1) % entries.count
        storedCount -= 1
    }

    @usableFromInline
    mutating func removeAll() {
        entries = []
        head = 0
        storedCount = 0
        bytes = 0
    }

    public var count: Int { Int(storedCount) }

    /// Bytes of action JSON held.
    public var byteCount: Int { bytes }

    /// The entry `position` places after the oldest.
    @inlinable
    func entry(at position: Int) -> ActionLogEntry { entries[(head + position) % entries.count] }

    /// The seq of the oldest retained entry.
    public var oldestSeq: UInt64? { count == 0 ? nil : entry(at: 0).seq }

    /// Every entry, oldest first.
    public var all: [ActionLogEntry] { (0..<count).map { entry(at: $0) } }

    /// Calls `body` with every entry, oldest first, without copying the log.
    func forEach(_ body: (ActionLogEntry) throws -> Void) rethrows {
        for position in 0..<count { try body(entry(at: position)) }
    }

    /// Entries with `seq > since`, at most `limit` of them, and the `seq` to ask from next when more remain.
    public func entries(since: UInt64, limit: Int) -> (entries: [ActionLogEntry], next: UInt64?) {
        var result: [ActionLogEntry] = []
        let total = count
        // Sorted by seq from `head`; binary-search the first entry after `since`.
        var low = 0
        var high = total
        while low < high {
            let middle = (low + high) / 2
            if entry(at: middle).seq <= since { low = middle + 1 } else { high = middle }
        }
        var index = low
        while index < total, result.count < limit {
            result.append(entry(at: index))
            index += 1
        }
        let next = index < total ? result.last?.seq : nil
        return (result, next)
    }
}
