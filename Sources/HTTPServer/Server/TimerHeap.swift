/// A binary min-heap of connection deadlines. Each connection keeps at most one live entry
/// (identified by its stamp); moving a deadline later costs nothing until the entry pops.
struct TimerHeap {
    /// A deadline for the connection in `slot` of that `generation` (not a reference, so closed
    /// connections are freed at once instead of living on until their entry pops).
    struct Entry {
        var deadline: Duration
        var stamp: UInt64
        var slot: Int
        var generation: UInt32
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var earliest: Duration? { entries.first?.deadline }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(at now: Duration) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if entries.isEmpty { return first }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    mutating func removeAll() { entries.removeAll() }
}
