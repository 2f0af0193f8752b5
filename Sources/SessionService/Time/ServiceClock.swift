import Dispatch
import HTTPServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the service reads time and schedules deadlines (`?wait=true` timeouts, idle-session expiry,
/// storage maintenance). It is also the HTTP server's clock (connection timeouts, keep-alive comments),
/// so one clock rules every timer; tests inject a manual one (the test toolkit's `InjectedClock`) and
/// advance it instead of sleeping.
public protocol ServiceClock: ServerClock {
    /// Monotonic nanoseconds, for durations.
    func monotonicNanoseconds() -> UInt64
    /// Nanoseconds since the Unix epoch, for timestamps shown to people (`"at"` in the action log).
    func wallNanoseconds() -> Int64
    /// Runs `work` once, on some thread, after `delay`; the returned handle cancels it.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
    /// The clock reactors sleep on (`ReactorContext.clock`): one that moves with this one.
    var clockForReactors: any Clock<Duration> { get }
}

extension ServiceClock {
    /// The continuous clock: the real service clock's time.
    public var clockForReactors: any Clock<Duration> { ContinuousClock() }
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

    /// Claims the right to run, for a clock about to run the work: false when cancelled (or already run).
    public func claim() -> Bool { !cancelled.exchange(true, ordering: .acquiringAndReleasing) }

    /// True once cancelled (or run): a clock may drop the entry without waking for it.
    var isSettled: Bool { cancelled.load(ordering: .acquiring) }
}

/// The real clock: `CLOCK_MONOTONIC`, `CLOCK_REALTIME`, and one Dispatch timer for all its work (`DeadlineTimers`).
public struct SystemServiceClock: ServiceClock {
    public init() {}

    /// `CLOCK_MONOTONIC` as the HTTP server reads it.
    public func now() -> Duration { .nanoseconds(Int64(monotonicNanoseconds())) }

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
        DeadlineTimers.shared.schedule(handle, at: DispatchTime.now().uptimeNanoseconds + UInt64(nanoseconds), work)
        return handle
    }
}
