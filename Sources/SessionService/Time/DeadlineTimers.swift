import Dispatch
import Heaps
import Synchronization

/// The real clock's scheduled work: one Dispatch timer armed for the earliest deadline, instead of one
/// `asyncAfter` per piece of work. Every `?wait=true` action schedules its timeout, nearly always cancelled
/// a few milliseconds later; registering each with Dispatch cost a wake-up of its manager thread (an
/// `eventfd` write and an `epoll` round) per action, and one more of a worker thread when it came due. Work
/// scheduled later than the armed deadline (every timeout of the same length) only joins a heap. Cancelled
/// entries are dropped from the heap's top without a wake-up, a few at a time (two when work is scheduled, 256
/// when the timer fires), and the timer is re-armed for the earliest deadline left on top: a cancelled timeout
/// nearly never wakes anything, and no call holds the lock for long.
///
/// ```swift
/// let handle = ScheduledWork()
/// DeadlineTimers.shared.schedule(handle, at: DispatchTime.now().uptimeNanoseconds + 1_000_000) { print("due") }
/// handle.cancel()   // nothing runs; the entry is dropped when its deadline comes
/// ```
final class DeadlineTimers: Sendable {
    /// The process's timers (the system clock's).
    static let shared = DeadlineTimers()

    private struct Entry {
        var handle: ScheduledWork
        var work: @Sendable () -> Void
    }

    private struct State {
        /// The work by deadline (`DispatchTime` uptime nanoseconds).
        var heap = MinHeap<UInt64, Entry>()
        /// The deadline the pending Dispatch timer fires at; nil when none is pending.
        var armed: UInt64?
        /// How often the Dispatch timer has fired (tests: cancelled deadlines must not add to it).
        var wakeUps = 0

        /// Drops up to `limit` cancelled entries from the top. Bounded, because cancelled timeouts pile up under a
        /// live entry (a periodic task's) and were all dropped at once when it fired: hundreds of thousands of
        /// removals under the lock every `schedule` waits for, stalling `?wait=true` answers for up to 0.4 s.
        mutating func dropSettledTop(limit: Int) {
            var dropped = 0
            while dropped < limit, let first = heap.first, first.value.handle.isSettled {
                heap.removeFirst()
                dropped += 1
            }
        }
    }

    private let state = Mutex(State())

    /// Runs `work` on a global queue at `deadline` (`DispatchTime` uptime nanoseconds) unless `handle` is
    /// cancelled first.
    func schedule(_ handle: ScheduledWork, at deadline: UInt64, _ work: @escaping @Sendable () -> Void) {
        let arm = state.withLock { state -> Bool in
            // Amortised: each entry is popped once, here or when due; equal timeouts leave the heap in
            // deadline order, so the top is nearly always long cancelled, and two out per one in drain a backlog.
            state.dropSettledTop(limit: 2)
            state.heap.push(deadline, Entry(handle: handle, work: work))
            guard state.armed.map({ deadline < $0 }) ?? true else { return false }
            state.armed = deadline
            return true
        }
        if arm { self.arm(at: deadline) }
    }

    private func arm(at deadline: UInt64) {
        DispatchQueue.global().asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) { [self] in
            fire(armedAt: deadline)
        }
    }

    /// Runs what is due, then arms the timer for the next deadline if no earlier one is pending.
    private func fire(armedAt deadline: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        let (due, next) = state.withLock { state -> ([Entry], UInt64?) in
            if state.armed == deadline { state.armed = nil }
            state.wakeUps += 1
            var due: [Entry] = []
            while let entry = state.heap.removeFirst(ifAtMost: now)?.value {
                if !entry.handle.isSettled { due.append(entry) }
            }
            // A backlog left on top costs at most a wake-up at its deadline, which drops the next part of it.
            state.dropSettledTop(limit: 256)
            guard let earliest = state.heap.first?.key, state.armed.map({ earliest < $0 }) ?? true else {
                return (due, nil)
            }
            state.armed = earliest
            return (due, earliest)
        }
        if let next { arm(at: next) }
        // Each on a queue of its own, as before: one that takes long (storage upkeep) delays no other.
        for entry in due where entry.handle.claim() { DispatchQueue.global().async(execute: entry.work) }
    }

    /// How often the Dispatch timer has fired so far.
    var wakeUps: Int { state.withLock { $0.wakeUps } }

    /// Entries in the heap, cancelled ones not yet dropped included (tests).
    var pending: Int { state.withLock { $0.heap.count } }
}
