import Synchronization

/// Positions of records appended to a backend whose writes are acknowledged out of order (each
/// session's publishes by themselves), and the watermark output waits for: the highest position up
/// to which every record is durable.
///
/// A record gets the next position when it is appended and is resolved once its acknowledgement
/// arrives; the watermark then moves over every resolved position it reaches. Waiters are woken on
/// the thread that resolves (a NATS connection's), so they must not block.
///
/// ```swift
/// let watermark = DurabilityWatermark()
/// let first = watermark.allocate(), second = watermark.allocate()
/// watermark.whenDurable(second) { print("both are durable") }
/// watermark.resolve([second])   // nothing yet: the first is still in flight
/// watermark.resolve([first])    // prints
/// ```
final class DurabilityWatermark: Sendable {
    private let appended = Atomic<UInt64>(0)
    private let durable = Atomic<UInt64>(0)
    private let state = Mutex(State())

    private struct State {
        /// Resolved positions beyond the watermark (acknowledged ahead of an older one).
        var ahead: Set<UInt64> = []
        var waiters: [(position: UInt64, wake: @Sendable () -> Void)] = []
    }

    /// The newest position handed out.
    var appendedPosition: UInt64 { appended.load(ordering: .acquiring) }

    /// The highest position up to which everything is durable.
    var durablePosition: UInt64 { durable.load(ordering: .acquiring) }

    /// The next position, for a record being appended.
    func allocate() -> UInt64 {
        appended.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
    }

    /// Whether everything up to `position` is durable.
    func isDurable(_ position: UInt64) -> Bool {
        durable.load(ordering: .acquiring) >= position
    }

    /// Calls `wake` once everything up to `position` is durable (at once when it already is).
    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        if isDurable(position) { return wake() }
        let now = state.withLock { state -> Bool in
            if durable.load(ordering: .acquiring) >= position { return true }
            state.waiters.append((position, wake))
            return false
        }
        if now { wake() }
    }

    /// Marks records durable and moves the watermark as far as it goes; wakes whoever it reached.
    func resolve(_ positions: some Sequence<UInt64>) {
        let ready = state.withLock { state -> [@Sendable () -> Void] in
            var mark = durable.load(ordering: .relaxed)
            for position in positions where position > mark { state.ahead.insert(position) }
            while state.ahead.remove(mark + 1) != nil { mark += 1 }
            durable.store(mark, ordering: .releasing)
            guard state.waiters.contains(where: { $0.position <= mark }) else { return [] }
            let ready = state.waiters.filter { $0.position <= mark }.map(\.wake)
            state.waiters.removeAll { $0.position <= mark }
            return ready
        }
        for wake in ready { wake() }
    }

    /// How many records were appended and are not durable yet.
    var outstanding: UInt64 { appendedPosition - durablePosition }
}
