#if canImport(Glibc)
    import Glibc
#endif

/// The time source for every server timeout. Production uses `MonotonicClock`; tests inject a
/// clock that moves only when they advance it (`advancesByItself` false), to fire timers without waiting.
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
