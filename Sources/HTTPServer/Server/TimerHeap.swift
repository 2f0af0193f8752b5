import Heaps

/// The loop's connection deadlines, soonest first. Each connection keeps at most one live entry
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

    private var heap = MinHeap<Duration, Entry>()

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var earliest: Duration? { heap.first?.key }

    mutating func push(_ entry: Entry) { heap.push(entry.deadline, entry) }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(at now: Duration) -> Entry? { heap.removeFirst(ifAtMost: now)?.value }

    mutating func removeAll() { heap.removeAll() }
}
