/// What a deadline is for.
enum DeadlineKind: Sendable, Equatable {
    /// A request's reply (by token).
    case reply(UInt64)
    /// A flush's `PONG` (by ping id).
    case ping(UInt64)
    /// A `connect(timeout:)` waiter (by waiter id).
    case connect(UInt64)
}

/// A binary min-heap of deadlines. Entries are never removed early: a deadline whose operation
/// already finished is found missing from its table when it fires, and ignored.
struct DeadlineQueue: Sendable {
    private var heap: [(at: ContinuousClock.Instant, kind: DeadlineKind)] = []

    /// The earliest deadline, if any.
    var earliest: ContinuousClock.Instant? { heap.first?.at }

    /// How many deadlines are queued (finished ones included until they fire).
    var count: Int { heap.count }

    /// Adds a deadline.
    mutating func insert(_ at: ContinuousClock.Instant, _ kind: DeadlineKind) {
        heap.append((at, kind))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest deadline if it is at or before `now`.
    mutating func popDue(_ now: ContinuousClock.Instant) -> DeadlineKind? {
        guard let first = heap.first, first.at <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count && heap[left].at < heap[smallest].at { smallest = left }
                if right < heap.count && heap[right].at < heap[smallest].at { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.kind
    }

    /// Drops every deadline (the connection closed).
    mutating func removeAll() { heap.removeAll() }
}
