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
    private struct Entry {
        var at: Int64
        var id: String
    }

    private struct State {
        /// Each session's soonest timer, the source of truth; `heap` may hold stale entries for a session.
        var next: [String: Int64] = [:]
        /// A binary min-heap by `at`; an entry whose `at` is not `next[id]` any more is skipped when popped.
        var heap: [Entry] = []
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
            push(Entry(at: at, id: id), &state.heap)
            // Stale entries pile up when sessions reschedule a lot: rebuild from `next` now and then.
            if state.heap.count > 2 * state.next.count + 1024 {
                state.heap = []
                for (id, at) in state.next { push(Entry(at: at, id: id), &state.heap) }
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
        while let top = state.heap.first, state.next[top.id] != top.at { pop(&state.heap) }
        guard !state.stopped, state.fire != nil, let top = state.heap.first else { return }
        let delay = max(0, top.at - clock.wallNanoseconds())
        state.armedAt = top.at
        state.armed = clock.schedule(after: .nanoseconds(delay)) { [weak self] in self?.runDue() }
    }

    /// Hands every session due now to `fire`, then arms for the next.
    private func runDue() {
        let now = clock.wallNanoseconds()
        let (due, fire) = state.withLock { state -> ([String], (@Sendable (String) -> Void)?) in
            var due: [String] = []
            while let top = state.heap.first, top.at <= now {
                pop(&state.heap)
                guard state.next[top.id] == top.at else { continue }
                state.next[top.id] = nil
                sessions.decrement()
                due.append(top.id)
            }
            state.armed = nil
            state.armedAt = nil
            return (due, state.stopped ? nil : state.fire)
        }
        if let fire { for id in due { fire(id) } }
        state.withLock { state in if state.armed == nil { arm(&state) } }
    }

    private func push(_ entry: Entry, _ heap: inout [Entry]) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop(_ heap: inout [Entry]) {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].at < heap[smallest].at { smallest = left }
            if right < heap.count, heap[right].at < heap[smallest].at { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
