import Heaps

/// What a deadline is for.
enum DeadlineKind: Sendable, Equatable {
    /// A request's reply (by token).
    case reply(UInt64)
    /// A flush's `PONG` (by ping id).
    case ping(UInt64)
    /// A `connect(timeout:)` waiter (by waiter id).
    case connect(UInt64)
}

/// A connection's deadlines, soonest first. Entries are never removed early: a deadline whose operation
/// already finished is found missing from its table when it fires, and ignored.
///
/// Nearly every request waits the connection's one request timeout, so deadlines mostly arrive in order: those
/// go to a first-in-first-out array (O(1) in and out, where a heap of thousands of answered requests cost a
/// sift-down per request), and only one earlier than the array's last goes to the heap.
struct DeadlineQueue: Sendable {
    /// Deadlines added in order, each at or after the one before; live from `head` on.
    private var ordered: [(at: ContinuousClock.Instant, kind: DeadlineKind)] = []
    /// Where `ordered`'s entries still queued start; the popped prefix is dropped once it is half the array.
    private var head = 0
    /// Deadlines that came earlier than `ordered`'s last.
    private var heap = MinHeap<ContinuousClock.Instant, DeadlineKind>()

    /// The earliest deadline, if any.
    var earliest: ContinuousClock.Instant? {
        guard head < ordered.count else { return heap.first?.key }
        guard let other = heap.first?.key else { return ordered[head].at }
        return min(ordered[head].at, other)
    }

    /// How many deadlines are queued (finished ones included until they fire).
    var count: Int { ordered.count - head + heap.count }

    /// Adds a deadline.
    mutating func insert(_ at: ContinuousClock.Instant, _ kind: DeadlineKind) {
        if let last = ordered.last, at < last.at {
            heap.push(at, kind)
        } else {
            ordered.append((at, kind))
        }
    }

    /// Removes and returns the earliest deadline if it is at or before `now`.
    mutating func popDue(_ now: ContinuousClock.Instant) -> DeadlineKind? {
        guard head < ordered.count, ordered[head].at <= now, heap.first.map({ ordered[head].at <= $0.key }) ?? true
        else { return heap.removeFirst(ifAtMost: now)?.value }
        let kind = ordered[head].kind
        head += 1
        if head == ordered.count {
            ordered.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= ordered.count {
            ordered.removeFirst(head)
            head = 0
        }
        return kind
    }

    /// Drops every deadline (the connection closed).
    mutating func removeAll() {
        ordered.removeAll()
        head = 0
        heap.removeAll()
    }
}
