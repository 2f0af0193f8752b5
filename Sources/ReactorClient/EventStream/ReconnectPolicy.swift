/// How long an event stream waits before it connects again.
///
/// The base is the server's latest `retry:` (in milliseconds), else ``initialDelay``. Each failed attempt in a row
/// multiplies the wait by ``multiplier`` up to ``maximumDelay`` (never below the server's `retry:`); a connection
/// the server accepted starts the count again. ``jitter`` shortens each wait by a random part of it, so the
/// clients of a restarted server do not all return in the same instant.
///
/// ```swift
/// var configuration = ReactorClient.Configuration()
/// configuration.reconnect = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(10))
/// ```
public struct ReconnectPolicy: Sendable, Equatable {
    /// The first wait while the server has sent no `retry:`.
    public var initialDelay: Duration
    /// The longest wait (unless the server's `retry:` asks for longer).
    public var maximumDelay: Duration
    /// Growth of the wait per failed attempt in a row.
    public var multiplier: Double
    /// The largest fraction by which a wait is shortened at random (0 for none).
    public var jitter: Double

    /// A policy; the defaults wait 1 s, 2 s, 4 s … up to 30 s, each up to 20 % shorter.
    public init(
        initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30), multiplier: Double = 2,
        jitter: Double = 0.2
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The wait before attempt `failures + 1`, where `failures` counts the failed attempts since the last
    /// accepted connection; `random` is in `0..<1`.
    public func delay(failures: Int, serverRetry: Duration?, random: Double) -> Duration {
        let base = serverRetry ?? initialDelay
        let cap = max(base, maximumDelay)
        var delay = base
        for _ in 0..<max(0, failures) {
            delay = delay * multiplier
            if delay >= cap { break }
        }
        delay = min(delay, cap)
        return delay * (1 - min(max(jitter, 0), 1) * random)
    }
}
