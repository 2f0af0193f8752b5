import Reactors
import Synchronization
import Testing

/// Drives one reactor in a test, in the spirit of TCA's TestStore: send actions, assert the exact sequence of
/// states they produce, and fail if states went unasserted or effects are still running at the end.
///
/// ```swift
/// let tester = ReactorTester(CounterReactor())
/// await tester.send(.increase, expecting: .init(value: 1))
/// await tester.send(.decrease, expecting: .init(value: 0))
/// await tester.finish()
/// ```
/// Waiting is driven by the states themselves; `timeout` only bounds a broken test.
public final class ReactorTester<R: Reactor>: Sendable where R.State: Equatable {
    private struct Inbox {
        var pending: [Snapshot<R.State>] = []
        var waiter: (count: Int, continuation: CheckedContinuation<[Snapshot<R.State>], Never>)?
        var lastVersion: UInt64

        /// Hands `count` states to the waiter once they are there.
        mutating func takeIfReady() -> (CheckedContinuation<[Snapshot<R.State>], Never>, [Snapshot<R.State>])? {
            guard let waiter, pending.count >= waiter.count else { return nil }
            self.waiter = nil
            let taken = Array(pending.prefix(waiter.count))
            pending.removeFirst(waiter.count)
            return (waiter.continuation, taken)
        }
    }

    /// The runtime under test, e.g. to read `currentState`, toggle stub mode or add a middleware.
    public let runtime: ReactorRuntime<R>
    private let inbox: Mutex<Inbox>
    private let observation: Mutex<ObservationToken?>
    private let timeout: Duration

    /// Starts `reactor` in a fresh runtime (or from `checkpoint`) and records every state it emits.
    public init(_ reactor: R, restoring checkpoint: Checkpoint<R.State>? = nil, timeout: Duration = .seconds(10)) {
        runtime = ReactorRuntime(reactor, restoring: checkpoint)
        inbox = Mutex(Inbox(lastVersion: runtime.currentVersion))
        observation = Mutex(nil)
        self.timeout = timeout
        let token = runtime.observe { [weak self] event in
            guard let self, case .state(let snapshot, _) = event else { return }
            let ready = self.inbox.withLock { inbox -> (CheckedContinuation<[Snapshot<R.State>], Never>, [Snapshot<R.State>])? in
                // The first event repeats the state the tester started from.
                guard snapshot.version > inbox.lastVersion else { return nil }
                inbox.lastVersion = snapshot.version
                inbox.pending.append(snapshot)
                return inbox.takeIfReady()
            }
            if let (continuation, states) = ready { continuation.resume(returning: states) }
        }
        observation.withLock { $0 = token }
    }

    /// Sends `action`, then asserts that exactly `expected` are the next states (none: assert nothing yet).
    public func send(_ action: R.Action, expecting expected: R.State..., sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try runtime.send(action)
        } catch {
            Issue.record("send failed: \(error)", sourceLocation: sourceLocation)
            return
        }
        if !expected.isEmpty { await receive(expected, sourceLocation: sourceLocation) }
    }

    /// Asserts that the next states emitted are exactly `expected`, in order, waiting for them if needed.
    public func receive(_ expected: R.State..., sourceLocation: SourceLocation = #_sourceLocation) async {
        await receive(expected, sourceLocation: sourceLocation)
    }

    /// Asserts that the next states emitted are exactly `expected`, in order, waiting for them if needed.
    public func receive(_ expected: [R.State], sourceLocation: SourceLocation = #_sourceLocation) async {
        let received = await next(expected.count)
        let states = received.map(\.state)
        if states != expected {
            Issue.record("""
                expected \(expected.count) state(s):
                \(expected.map { "  \($0)" }.joined(separator: "\n"))
                received \(states.count):
                \(states.map { "  \($0)" }.joined(separator: "\n"))
                """, sourceLocation: sourceLocation)
        }
    }

    /// Waits for `count` more states, or for the timeout (then returns what arrived).
    private func next(_ count: Int) async -> [Snapshot<R.State>] {
        let timeoutTask = Task { [self] in
            // Cancelled means the states arrived; only a real expiry may fail the waiter.
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            let expired = self.inbox.withLock { inbox -> (CheckedContinuation<[Snapshot<R.State>], Never>, [Snapshot<R.State>])? in
                guard let waiter = inbox.waiter else { return nil }
                inbox.waiter = nil
                defer { inbox.pending = [] }
                return (waiter.continuation, inbox.pending)
            }
            if let (continuation, states) = expired { continuation.resume(returning: states) }
        }
        defer { timeoutTask.cancel() }
        return await withCheckedContinuation { continuation in
            let ready = inbox.withLock { inbox in
                inbox.waiter = (count, continuation)
                return inbox.takeIfReady()
            }
            if let (continuation, states) = ready { continuation.resume(returning: states) }
        }
    }

    /// Fails if any emitted state has not been asserted.
    public func expectNoUnassertedStates(sourceLocation: SourceLocation = #_sourceLocation) {
        let pending = inbox.withLock { $0.pending }
        if !pending.isEmpty {
            Issue.record("\(pending.count) state(s) were emitted but not asserted: \(pending.map(\.state))",
                         sourceLocation: sourceLocation)
        }
    }

    /// Waits until no effect is running; fails (and returns false) if some still run after the timeout.
    @discardableResult
    public func waitForEffects(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let finished = await firstOf(timeout: timeout) { [runtime] in await runtime.waitForEffects() }
        if !finished {
            Issue.record("\(runtime.inFlightEffectCount) effect(s) still running after \(timeout); await or cancel them",
                         sourceLocation: sourceLocation)
        }
        return finished
    }

    /// Ends the test: waits (bounded) for running effects, fails if some remain or states went unasserted,
    /// then stops the runtime.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        if await waitForEffects(sourceLocation: sourceLocation) {
            expectNoUnassertedStates(sourceLocation: sourceLocation)
        }
        runtime.stop()
        observation.withLock { $0 = nil }
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
