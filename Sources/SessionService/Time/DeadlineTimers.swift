import Dispatch
import Heaps
import Synchronization

/// The real clock's scheduled work: one Dispatch timer armed for the earliest deadline, instead of one
/// `asyncAfter` per piece of work. Every `?wait=true` action schedules its timeout, nearly always cancelled
/// a few milliseconds later; registering each with Dispatch cost a wake-up of its manager thread (an
/// `eventfd` write and an `epoll` round) per action, and one more of a worker thread when it came due. Work
/// scheduled later than the armed deadline (every timeout of the same length) only joins a heap. Cancelled
/// entries are dropped from the heap's top without a wake-up (when work is scheduled and when the timer
/// fires), and the timer is re-armed only for the earliest live deadline: a cancelled timeout wakes nothing.
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

        /// Drops cancelled entries from the top, so that `heap.first` is the earliest live deadline.
        mutating func dropSettledTop() {
            while let first = heap.first, first.value.handle.isSettled { heap.removeFirst() }
        }
    }

    private let state = Mutex(State())

    /// Runs `work` on a global queue at `deadline` (`DispatchTime` uptime nanoseconds) unless `handle` is
    /// cancelled first.
    func schedule(_ handle: ScheduledWork, at deadline: UInt64, _ work: @escaping @Sendable () -> Void) {
        let arm = state.withLock { state -> Bool in
            // Amortised: each entry is popped once, here or when due; equal timeouts leave the heap in
            // deadline order, so the top is nearly always long cancelled and the heap stays near the live count.
            state.dropSettledTop()
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
            state.dropSettledTop()
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
}
