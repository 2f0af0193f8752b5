import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The time source for every server timeout. Production uses `MonotonicClock`; tests inject a
/// `ManualClock` and advance it to fire timers without waiting.
public protocol ServerClock: Sendable {
    /// Time elapsed since a fixed, arbitrary origin.
    func now() -> Duration
    /// Whether time passes on its own; when false, loops sleep until `onAdvance` actions run.
    var advancesByItself: Bool { get }
    /// Registers `action` to run after every manual advance (loops use it to re-check their timers).
    func onAdvance(_ action: @escaping @Sendable () -> Void)
}

extension ServerClock {
    /// Real clocks move on their own.
    public var advancesByItself: Bool { true }
    /// Real clocks need no nudging: loops compute their own waits.
    public func onAdvance(_ action: @escaping @Sendable () -> Void) {}
}

/// `CLOCK_MONOTONIC`: never jumps with wall-clock changes.
public struct MonotonicClock: ServerClock {
    /// The system's monotonic clock.
    public init() {}

    /// Time since an arbitrary point (boot), from `CLOCK_MONOTONIC`.
    public func now() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
}

/// A clock that only moves when `advance(by:)` is called; for tests of timeouts.
///
/// ```swift
/// let clock = ManualClock()
/// let server = HTTPServer(configuration: .init(), responder: app, clock: clock, logger: logger)
/// clock.advance(by: .seconds(31))  // idle connections time out now
/// ```
public final class ManualClock: ServerClock {
    private struct State {
        var now: Duration = .zero
        var actions: [@Sendable () -> Void] = []
    }
    private let state = Mutex(State())

    /// A clock at time zero.
    public init() {}

    /// The time the tests have advanced to.
    public func now() -> Duration { state.withLock { $0.now } }

    /// Only `advance(by:)` moves it.
    public var advancesByItself: Bool { false }

    /// Registers an action run after each `advance(by:)`.
    public func onAdvance(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.actions.append(action) }
    }

    /// Moves time forward and lets every registered loop check its timers.
    public func advance(by duration: Duration) {
        let actions = state.withLock { state in
            state.now += duration
            return state.actions
        }
        for action in actions { action() }
    }
}
