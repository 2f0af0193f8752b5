import Heaps
import Synchronization

/// The service's one index of pending timers, kept apart from the sessions so a session out of memory costs
/// an entry here, not its state: for each session with a pending timer, when its soonest one falls due. One
/// piece of work on the service clock waits for the soonest of all; when it runs, each session due is handed
/// to `fire` (which loads it if needed, fires what is due, and notes its next time again).
///
/// ```swift
/// index.start { id in store.session(id)?.fireDueTimers() }
/// index.note("a", at: clock.wallNanoseconds() + 30_000_000_000)   // session "a" has a timer in 30 s
/// ```
final class TimerIndex: Sendable {
    private struct State {
        /// Each session's soonest timer, the source of truth; `heap` may hold stale entries for a session.
        var next: [String: Int64] = [:]
        /// Session ids by when they fall due; an entry whose time is not `next[id]` any more is skipped when
        /// popped (lazy deletion).
        var heap = MinHeap<Int64, String>()
        /// The deadline the clock's work is armed for, and that work.
        var armedAt: Int64?
        var armed: ScheduledWork?
        var fire: (@Sendable (String) -> Void)?
        var stopped = false
    }

    private let clock: any ServiceClock
    private let state = Mutex(State())
    /// `reactor_timer_sessions`: how many sessions have an entry.
    private let sessions: Gauge

    init(clock: any ServiceClock, sessions: Gauge = Gauge()) {
        self.clock = clock
        self.sessions = sessions
    }

    /// Starts firing: `fire` gets the id of each session whose soonest timer is due, on the clock's thread.
    func start(_ fire: @escaping @Sendable (String) -> Void) {
        state.withLock { state in
            state.fire = fire
            arm(&state)
        }
    }

    /// Stops firing (shutdown): what is pending stays stored and fires after the next start.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.armed?.cancel()
            state.armed = nil
            state.armedAt = nil
        }
    }

    /// Session `id`'s soonest pending timer is due at `at` (wall nanoseconds); nil: it has none.
    func note(_ id: String, at: Int64?) {
        state.withLock { state in
            let old = state.next[id]
            guard old != at else { return }
            state.next[id] = at
            if old == nil { sessions.increment() } else if at == nil { sessions.decrement() }
            guard let at else { return }
            state.heap.push(at, id)
            // Stale entries pile up when sessions reschedule a lot: rebuild from `next` now and then.
            if state.heap.count > 2 * state.next.count + 1024 {
                state.heap = MinHeap()
                for (id, at) in state.next { state.heap.push(at, id) }
            }
            if state.fire != nil, state.armedAt.map({ at < $0 }) ?? true { arm(&state) }
        }
    }

    /// Session `id`'s soonest pending timer (nil: none known).
    func next(of id: String) -> Int64? { state.withLock { $0.next[id] } }

    /// How many sessions have a pending timer.
    var count: Int { state.withLock { $0.next.count } }

    /// Arms the clock's work for the soonest entry; the caller holds the lock.
    private func arm(_ state: inout State) {
        state.armed?.cancel()
        state.armed = nil
        state.armedAt = nil
        while let top = state.heap.first, state.next[top.value] != top.key { state.heap.removeFirst() }
        guard !state.stopped, state.fire != nil, let top = state.heap.first else { return }
        let delay = max(0, top.key - clock.wallNanoseconds())
        state.armedAt = top.key
        state.armed = clock.schedule(after: .nanoseconds(delay)) { [weak self] in self?.runDue() }
    }

    /// Hands every session due now to `fire`, then arms for the next.
    private func runDue() {
        let now = clock.wallNanoseconds()
        let (due, fire) = state.withLock { state -> ([String], (@Sendable (String) -> Void)?) in
            var due: [String] = []
            while let top = state.heap.removeFirst(ifAtMost: now) {
                guard state.next[top.value] == top.key else { continue }
                state.next[top.value] = nil
                sessions.decrement()
                due.append(top.value)
            }
            state.armed = nil
            state.armedAt = nil
            return (due, state.stopped ? nil : state.fire)
        }
        if let fire { for id in due { fire(id) } }
        state.withLock { state in if state.armed == nil { arm(&state) } }
    }
}
