import Synchronization

/// A Prometheus histogram with fixed upper bounds, in seconds; observations are lock-free.
public final class Histogram: Sendable {
    /// Upper bounds of the buckets (ascending); `+Inf` is implied.
    public let bounds: [Double]
    private let boundsNanoseconds: [UInt64]
    private let buckets: [Counter]
    private let count = Atomic<Int>(0)
    private let sumNanoseconds = Atomic<Int>(0)

    /// Default bounds from 1 µs to 10 s, for in-process latencies.
    public static let latencyBounds: [Double] = [
        0.000_001, 0.000_005, 0.000_01, 0.000_05, 0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10,
    ]

    public init(bounds: [Double] = Histogram.latencyBounds) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        self.bounds = bounds
        boundsNanoseconds = bounds.map { UInt64(($0 * 1e9).rounded()) }
        buckets = (0...bounds.count).map { _ in Counter() }
    }

    /// Records one observation of `nanoseconds`.
    public func observe(nanoseconds: UInt64) {
        var index = boundsNanoseconds.count
        for (i, bound) in boundsNanoseconds.enumerated() where nanoseconds <= bound {
            index = i
            break
        }
        buckets[index].increment()
        count.add(1, ordering: .relaxed)
        sumNanoseconds.add(Int(clamping: nanoseconds), ordering: .relaxed)
    }

    /// Cumulative counts per bound (last = +Inf = total), the sum in seconds, and the count.
    public func snapshot() -> (cumulative: [Int], sum: Double, count: Int) {
        var running = 0
        var cumulative: [Int] = []
        for bucket in buckets {
            running += bucket.value
            cumulative.append(running)
        }
        return (cumulative, Double(sumNanoseconds.load(ordering: .relaxed)) / 1e9, running)
    }
}
