import Synchronization

/// A clock that only moves when a test says so: inject it into reactors (`delay(for:clock:)`), then let it run,
/// through a `ReactorTester` made with it (`advance`, `run`, `receive(timeout:)`) or by hand.
///
/// ```swift
/// let clock = TestClock()
/// let runtime = ReactorRuntime(FruitReactor(clock: clock))
/// try runtime.send(.apple)
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
        /// Called (outside the lock) whenever a task starts or stops sleeping: how a tester notices.
        var watchers: [UInt64: @Sendable () -> Void] = [:]

        /// Wakes `waitForSleepers` callers whose count is reached.
        mutating func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let ready = sleeperWaiters.filter { $0.count <= sleepers.count }.map(\.continuation)
            sleeperWaiters.removeAll { $0.count <= sleepers.count }
            return ready
        }
    }

    private let state = Mutex(State())
    private typealias Watcher = @Sendable () -> Void
    /// What `sleep` found as it registered: due already, the `waitForSleepers` callers to wake, the watchers to call.
    private typealias Registration = (due: Bool, waiters: [CheckedContinuation<Void, Never>], watchers: [Watcher])

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
                let (due, waiters, watchers) = state.withLock { state -> Registration in
                    // A task cancelled before registering would never be woken by `onCancel`.
                    if deadline <= state.now || Task.isCancelled { return (true, [], []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (false, state.takeSatisfiedWaiters(), Array(state.watchers.values))
                }
                if due { continuation.resume() }
                for waiter in waiters { waiter.resume() }
                for watcher in watchers { watcher() }
            }
        } onCancel: {
            let (cancelled, watchers) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [Watcher]) in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return (nil, []) }
                return (state.sleepers.remove(at: index).continuation, Array(state.watchers.values))
            }
            cancelled?.resume(throwing: CancellationError())
            for watcher in watchers { watcher() }
        }
        try Task.checkCancellation()
    }

    /// Moves time forward by `duration`, waking (in deadline order) every sleeper that is now due.
    public func advance(by duration: Duration) async {
        wake(movingTo: { $0.advanced(by: duration) })
        await Task.yield()
    }

    /// Moves time forward to `instant` (never back), waking (in deadline order) every sleeper that is now due.
    public func advance(to instant: Instant) async {
        wake(movingTo: { max($0, instant) })
        await Task.yield()
    }

    /// The earliest deadline of the tasks sleeping now, if any.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    /// Sets the time to `move(now)` and resumes the sleepers then due; returns how many woke.
    @discardableResult
    func wake(movingTo move: (Instant) -> Instant) -> Int {
        let (due, watchers) = state.withLock { state -> ([Sleeper], [@Sendable () -> Void]) in
            state.now = move(state.now)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return (due, due.isEmpty ? [] : Array(state.watchers.values))
        }
        for sleeper in due { sleeper.continuation.resume() }
        for watcher in watchers { watcher() }
        return due.count
    }

    /// Calls `watcher` whenever a task starts or stops sleeping on this clock, until `unwatch(_:)`.
    func watch(_ watcher: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.watchers[state.nextID] = watcher
            return state.nextID
        }
    }

    /// Stops calling the watcher `watch(_:)` returned `id` for.
    func unwatch(_ id: UInt64) { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }

    /// Moves time to the latest pending deadline, waking every sleeper.
    public func run() async {
        let latest = state.withLock { state in state.sleepers.map(\.deadline).max().map { state.now.duration(to: $0) } }
        await advance(by: latest ?? .zero)
    }

    /// Returns once at least `count` tasks are sleeping on this clock (so an `advance` will reach them);
    /// records a failure and returns if they are not there within `timeout` (a broken test, not a slow one).
    public func waitForSleepers(
        _ count: Int = 1, timeout: Duration = .seconds(10),
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
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
            recordFailure(
                "waited \(timeout) for \(count) task(s) to sleep on the test clock; \(sleeperCount) did",
                at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
        }
    }
}

/// Runs `body` in a task and returns true when it ends within `timeout`, false otherwise (leaving it running).
func firstOf(timeout: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let outcome = Outcome()
    return await withCheckedContinuation { continuation in
        outcome.set(continuation)
        Task {
            await body()
            outcome.resume(true)
        }
        Task {
            try? await Task.sleep(for: timeout)
            outcome.resume(false)
        }
    }
}

/// A continuation resumed by whichever of two racing tasks gets there first.
private final class Outcome: Sendable {
    private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation.withLock { $0 = continuation } }

    func resume(_ value: Bool) {
        continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }?.resume(returning: value)
    }
}
