import Synchronization

/// A monotonically increasing count, safe to bump from any thread.
public final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    public init() {}

    @inline(__always)
    public func increment(by amount: Int = 1) {
        storage.add(amount, ordering: .relaxed)
    }

    public var value: Int { storage.load(ordering: .relaxed) }
}

/// A value that goes up and down (sessions, subscribers).
public final class Gauge: Sendable {
    private let storage = Atomic<Int>(0)

    public init() {}

    @inline(__always)
    public func increment(by amount: Int = 1) { storage.add(amount, ordering: .relaxed) }

    @inline(__always)
    public func decrement(by amount: Int = 1) { storage.subtract(amount, ordering: .relaxed) }

    public func set(_ value: Int) { storage.store(value, ordering: .relaxed) }

    public var value: Int { storage.load(ordering: .relaxed) }
}
