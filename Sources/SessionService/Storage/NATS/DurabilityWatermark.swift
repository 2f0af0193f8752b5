import Synchronization

/// Positions of records appended to a backend whose writes are acknowledged out of order (each
/// session's publishes by themselves), and the watermark output waits for: the highest position up
/// to which every record is durable.
///
/// A record gets the next position when it is appended and is resolved once its acknowledgement
/// arrives; the watermark then moves over every resolved position it reaches. Waiters are woken on
/// the thread that resolves (a NATS connection's), so they must not block.
///
/// A record that can never be stored (its session was taken over by another instance) is resolved
/// as lost: the watermark passes it, so output of other sessions goes on, and ``lossReason(_:)``
/// names it, so output that shows that session's records is refused instead.
///
/// Output that shows one session need not wait for other sessions' records before it: a position
/// resolved `exactly` (its session's earlier records are all resolved, which its caller vouches for)
/// is durable for ``isDurableExactly(_:)`` before the watermark reaches it. A session whose second
/// publish waits for its first then holds back its own answers only, not every later one.
///
/// ```swift
/// let watermark = DurabilityWatermark()
/// let first = watermark.allocate(), second = watermark.allocate()
/// watermark.whenDurable(second) { print("both are resolved") }
/// watermark.resolve([second])   // nothing yet: the first is still in flight
/// watermark.markLost([first], reason: "taken over")   // prints
/// watermark.lossReason(first)   // "taken over"
/// ```
final class DurabilityWatermark: Sendable {
    private let appended = Atomic<UInt64>(0)
    private let durable = Atomic<UInt64>(0)
    /// Whether any position was ever lost: until then nothing need be looked up.
    private let anyLost = Atomic<Bool>(false)
    private let state = Mutex(State())

    /// How many lost positions are remembered. Output showing one is queued only while its session
    /// still runs here, which ends as the loss is found; the oldest are forgotten past this.
    static let lostCapacity = 65_536

    private struct State {
        /// Resolved positions beyond the watermark (acknowledged ahead of an older one).
        var ahead: Set<UInt64> = []
        /// Those of them resolved exactly: every earlier record of their session is resolved too.
        var exactly: Set<UInt64> = []
        /// Who waits for which position, and whether for the position exactly or everything up to it.
        var waiters: [(position: UInt64, exact: Bool, wake: @Sendable () -> Void)] = []
        /// Lost positions and why, and the order they were lost in (to forget the oldest).
        var lost: [UInt64: String] = [:]
        var lostOrder: [UInt64] = []
        var lostOrderStart = 0
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
        wait(for: position, exact: false, wake)
    }

    /// Whether `position` and every earlier record of its session are durable (see the type's comment).
    func isDurableExactly(_ position: UInt64) -> Bool {
        if isDurable(position) { return true }
        return state.withLock { $0.exactly.contains(position) }
    }

    /// Calls `wake` once ``isDurableExactly(_:)`` holds for `position` (at once when it already does).
    func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        wait(for: position, exact: true, wake)
    }

    private func wait(for position: UInt64, exact: Bool, _ wake: @escaping @Sendable () -> Void) {
        if isDurable(position) { return wake() }
        let now = state.withLock { state -> Bool in
            if durable.load(ordering: .acquiring) >= position || (exact && state.exactly.contains(position)) {
                return true
            }
            state.waiters.append((position, exact, wake))
            return false
        }
        if now { wake() }
    }

    /// Marks records durable and moves the watermark as far as it goes; wakes whoever it reached. `exactly`
    /// when every earlier record of their session is resolved (output showing that session may go).
    func resolve(_ positions: some Collection<UInt64>, exactly: Bool = false) {
        guard !positions.isEmpty else { return }
        let ready = state.withLock { state -> [@Sendable () -> Void] in
            var mark = durable.load(ordering: .relaxed)
            for position in positions where position > mark {
                state.ahead.insert(position)
                if exactly { state.exactly.insert(position) }
            }
            while state.ahead.remove(mark + 1) != nil {
                mark += 1
                if !state.exactly.isEmpty { state.exactly.remove(mark) }
            }
            durable.store(mark, ordering: .releasing)
            let resolvedExactly = exactly ? state.exactly : []
            let due = { (waiter: (position: UInt64, exact: Bool, wake: @Sendable () -> Void)) in
                waiter.position <= mark || (waiter.exact && resolvedExactly.contains(waiter.position))
            }
            guard state.waiters.contains(where: due) else { return [] }
            let ready = state.waiters.filter(due).map(\.wake)
            state.waiters.removeAll(where: due)
            return ready
        }
        for wake in ready { wake() }
    }

    /// Resolves records that can never be stored, remembering why (``lossReason(_:)``).
    func markLost(_ positions: [UInt64], reason: String) {
        guard !positions.isEmpty else { return }
        state.withLock { state in
            for position in positions where state.lost.updateValue(reason, forKey: position) == nil {
                state.lostOrder.append(position)
            }
            while state.lostOrder.count - state.lostOrderStart > Self.lostCapacity {
                state.lost.removeValue(forKey: state.lostOrder[state.lostOrderStart])
                state.lostOrderStart += 1
            }
            if state.lostOrderStart > Self.lostCapacity {
                state.lostOrder.removeFirst(state.lostOrderStart)
                state.lostOrderStart = 0
            }
        }
        // Before the watermark passes them: whoever it wakes must find them lost.
        anyLost.store(true, ordering: .releasing)
        resolve(positions)
    }

    /// Why the record at `position` can never be stored; nil when it is durable or on its way.
    func lossReason(_ position: UInt64) -> String? {
        guard anyLost.load(ordering: .acquiring) else { return nil }
        return state.withLock { $0.lost[position] }
    }

    /// How many records were appended and are not durable yet.
    var outstanding: UInt64 { appendedPosition - durablePosition }
}
