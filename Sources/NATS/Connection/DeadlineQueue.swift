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
struct DeadlineQueue: Sendable {
    private var heap = MinHeap<ContinuousClock.Instant, DeadlineKind>()

    /// The earliest deadline, if any.
    var earliest: ContinuousClock.Instant? { heap.first?.key }

    /// How many deadlines are queued (finished ones included until they fire).
    var count: Int { heap.count }

    /// Adds a deadline.
    mutating func insert(_ at: ContinuousClock.Instant, _ kind: DeadlineKind) { heap.push(at, kind) }

    /// Removes and returns the earliest deadline if it is at or before `now`.
    mutating func popDue(_ now: ContinuousClock.Instant) -> DeadlineKind? { heap.removeFirst(ifAtMost: now)?.value }

    /// Drops every deadline (the connection closed).
    mutating func removeAll() { heap.removeAll() }
}
