import Synchronization

/// One reactor's `reduce` times: the histogram behind `reactor_reduce_seconds{reactor=…}`, and the rate limit of
/// its slow-reduce log lines (at most one a second per reactor, saying how many slow ones it did not log).
public final class ReduceTiming: Sendable {
    public let reactor: String
    public let histogram = Histogram()
    /// The wall second of the last slow-reduce line; 0: none yet.
    private let lastLineSecond = Atomic<UInt64>(0)
    /// Slow reduces since the last line that got none of their own.
    private let unlogged = Atomic<Int>(0)

    init(reactor: String) {
        self.reactor = reactor
    }

    /// Whether a slow reduce at `nanoseconds` (monotonic) may log now; if so, with how many slow reduces before it
    /// went unlogged. Lock-free: two threads racing for the same second let exactly one log.
    func mayLog(atNanoseconds nanoseconds: UInt64) -> (allowed: Bool, unlogged: Int) {
        let second = nanoseconds / 1_000_000_000 + 1
        let last = lastLineSecond.load(ordering: .relaxed)
        if last != second, lastLineSecond.compareExchange(expected: last, desired: second, ordering: .relaxed).exchanged
        {
            return (true, unlogged.exchange(0, ordering: .relaxed))
        }
        unlogged.add(1, ordering: .relaxed)
        return (false, 0)
    }
}
