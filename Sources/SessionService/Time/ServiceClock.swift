import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the service reads time and schedules deadlines (`?wait=true` timeouts, idle-session expiry).
/// Tests inject ``ManualServiceClock`` and advance it instead of sleeping.
public protocol ServiceClock: Sendable {
    /// Monotonic nanoseconds, for durations.
    func monotonicNanoseconds() -> UInt64
    /// Nanoseconds since the Unix epoch, for timestamps shown to people (`"at"` in the action log).
    func wallNanoseconds() -> Int64
    /// Runs `work` once, on some thread, after `delay`; the returned handle cancels it.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}

/// A scheduled piece of work that can still be cancelled.
public final class ScheduledWork: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let onCancel: @Sendable () -> Void

    public init(onCancel: @escaping @Sendable () -> Void = {}) { self.onCancel = onCancel }

    /// Prevents the work from running if it has not started.
    public func cancel() {
        if !cancelled.exchange(true, ordering: .acquiringAndReleasing) { onCancel() }
    }

    /// Claims the right to run: false when cancelled (or already run).
    func claim() -> Bool { !cancelled.exchange(true, ordering: .acquiringAndReleasing) }
}

/// The real clock: `CLOCK_MONOTONIC`, `CLOCK_REALTIME`, and Dispatch timers.
public struct SystemServiceClock: ServiceClock {
    public init() {}

    public func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    public func wallNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let handle = ScheduledWork()
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            if handle.claim() { work() }
        }
        return handle
    }
}

/// A clock that moves only when a test calls ``advance(by:)``; scheduled work runs in deadline order
/// on the advancing thread.
public final class ManualServiceClock: ServiceClock {
    private struct Pending {
        var deadline: UInt64
        var order: Int
        var handle: ScheduledWork
        var work: @Sendable () -> Void
    }

    private struct Storage {
        var now: UInt64 = 1_000_000_000
        var wallOffset: Int64 = 1_790_000_000_000_000_000
        var pending: [Pending] = []
        var order = 0
    }

    private let storage = Mutex(Storage())

    public init() {}

    public func monotonicNanoseconds() -> UInt64 { storage.withLock { $0.now } }

    public func wallNanoseconds() -> Int64 { storage.withLock { $0.wallOffset + Int64($0.now) } }

    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let handle = ScheduledWork()
        let (seconds, attoseconds) = delay.components
        let nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        storage.withLock {
            $0.order += 1
            $0.pending.append(Pending(deadline: $0.now + nanoseconds, order: $0.order, handle: handle, work: work))
        }
        return handle
    }

    /// How many scheduled pieces of work have not run yet (cancelled ones included until their time).
    public var pendingCount: Int { storage.withLock { $0.pending.count } }

    /// Moves time forward, running every piece of work whose deadline is reached, earliest first.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let target = storage.withLock { $0.now } + UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        while true {
            let next: Pending? = storage.withLock { state in
                guard let index = state.pending.indices.filter({ state.pending[$0].deadline <= target })
                    .min(by: { (state.pending[$0].deadline, state.pending[$0].order) < (state.pending[$1].deadline, state.pending[$1].order) })
                else {
                    state.now = target
                    return nil
                }
                let item = state.pending.remove(at: index)
                state.now = max(state.now, item.deadline)
                return item
            }
            guard let next else { return }
            if next.handle.claim() { next.work() }
        }
    }
}
