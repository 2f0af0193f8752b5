import Synchronization
import Testing

/// A clock that only moves when a test says so: inject it into reactors (`delay(for:clock:)`), then `advance`.
///
/// ```swift
/// let clock = TestClock()
/// let tester = ReactorTester(FruitReactor(clock: clock))
/// await tester.send(.apple, expecting: .init(fruitName: "", isLoading: true))
/// await clock.waitForSleepers()          // the effect is now sleeping on the clock
/// await clock.advance(by: .milliseconds(500))
/// ```
public final class TestClock: Clock, Sendable {
    /// A point on the test clock: the time elapsed since the clock was made.
    public struct Instant: InstantProtocol, Sendable {
        /// Time since the clock's start.
        public var offset: Duration

        /// A point `offset` after the clock's start.
        public init(offset: Duration = .zero) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Earlier instants sort first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant()
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Wakes `waitForSleepers` callers whose count is reached.
        mutating func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let ready = sleeperWaiters.filter { $0.count <= sleepers.count }.map(\.continuation)
            sleeperWaiters.removeAll { $0.count <= sleepers.count }
            return ready
        }
    }

    private let state = Mutex(State())

    /// A clock at offset zero with nobody sleeping.
    public init() {}

    /// The current instant; moves only through `advance` and `run`.
    public var now: Instant { state.withLock { $0.now } }
    /// Zero: the test clock has no granularity.
    public var minimumResolution: Duration { .zero }
    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until `advance` reaches `deadline`; throws `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (due, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    // A task cancelled before registering would never be woken by `onCancel`.
                    if deadline <= state.now || Task.isCancelled { return (true, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (false, state.takeSatisfiedWaiters())
                }
                if due { continuation.resume() }
                for waiter in waiters { waiter.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves time forward by `duration`, waking (in deadline order) every sleeper that is now due.
    public func advance(by duration: Duration) async {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        await Task.yield()
    }

    /// Moves time to the latest pending deadline, waking every sleeper.
    public func run() async {
        let latest = state.withLock { state in state.sleepers.map(\.deadline).max().map { state.now.duration(to: $0) } }
        await advance(by: latest ?? .zero)
    }

    /// Returns once at least `count` tasks are sleeping on this clock (so an `advance` will reach them);
    /// records an issue and returns if they are not there within `timeout` (a broken test, not a slow one).
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async {
        let reached = await firstOf(timeout: timeout) { [self] in
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.sleepers.count >= count { return true }
                    state.sleeperWaiters.append((count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        }
        if !reached {
            Issue.record("waited \(timeout) for \(count) task(s) to sleep on the test clock; \(sleeperCount) did", sourceLocation: sourceLocation)
        }
    }
}
