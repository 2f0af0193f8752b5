import Reactors
import Synchronization

/// Drives one reactor in a test the way TCA's TestStore drives a feature: each assertion says how the state
/// changed from the one before, a failure shows the paths that differ, and at the end every state, pulse,
/// running effect and scheduled action must have been accounted for.
///
/// ```swift
/// let clock = TestClock()
/// let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
/// await tester.send(.apple) { $0.isLoading = true }
/// await tester.receive(.setFruitName("apple"), timeout: .milliseconds(500)) { $0.fruitName = "apple" }
/// await tester.receive(.setLoading(false)) { $0.isLoading = false }
/// await tester.finish()
/// ```
/// `send` asserts the first state the action produces; every later one, whether the action's own next
/// mutation or an effect's, is taken by `receive`. An assertion closure mutates a copy of the previous state:
/// assigning a `@Pulse` property asserts that the pulse was delivered. `timeout:` is time on the tester's
/// `TestClock`: the tester lets the clock run (deadline by deadline, sending actions `schedule`d on the way)
/// until the state arrives or the timeout passes. Failures go to Swift Testing inside a `@Test` and to XCTest
/// otherwise, at the line of the call. Call the tester from the test's own task.
public final class ReactorTester<R: Reactor>: Sendable where R.State: Equatable {
    /// The runtime under test, e.g. to toggle stub mode, add a middleware or read `inFlightEffectCount`.
    public let runtime: ReactorRuntime<R>
    /// The clock the reactor sleeps on, if the test gave one: `timeout:`, `schedule` and `advance` use it.
    public let clock: TestClock?
    /// How long, in real time, any wait may take before the test is called broken (not slow).
    public let bound: Duration

    let recording: TesterRecording<R>
    private let observation: ObservationToken
    private let clockWatch: UInt64?

    /// Starts `reactor` in a fresh runtime (or from `checkpoint`) and records every state it emits.
    ///
    /// Pass the `TestClock` the reactor's effects sleep on as `clock` to use virtual time. `timeout` bounds, in real
    /// time, every wait of this tester.
    public init(
        _ reactor: R, restoring checkpoint: Checkpoint<R.State>? = nil, clock: TestClock? = nil,
        exhaustivity: Exhaustivity = .on, timeout: Duration = .seconds(10)
    ) {
        runtime = ReactorRuntime(reactor, restoring: checkpoint)
        self.clock = clock
        bound = timeout
        let snapshot = runtime.currentSnapshot
        let recording = TesterRecording<R>(
            TesterBook(lastVersion: snapshot.version, state: snapshot.state, exhaustivity: exhaustivity), clock: clock)
        self.recording = recording
        runtime.addMiddleware(MutationRecorder(recording: recording))
        runtime.setTimerHandler { [weak recording] request, _ in recording?.timer(request) }
        observation = runtime.observe { event in recording.record(event) }
        clockWatch = clock?.watch { recording.changes.bump() }
    }

    deinit {
        if let clockWatch { clock?.unwatch(clockWatch) }
        observation.cancel()
        runtime.stop()
    }

    /// The reactor's pending timers (`Effect.schedule`), soonest first: their names and when they fall due on the
    /// test clock. The clock sends each one's action as it passes its time (`advance`, `run`, `receive(timeout:)`).
    public var pendingTimers: [(name: String, at: Duration)] {
        recording.book.withLock { book in
            book.scheduled.compactMap { item in item.timer.map { ($0, item.time.offset) } }
        }
    }

    /// The state the next assertion starts from: the last one an assertion took (TCA's `store.state`).
    public var state: R.State { recording.book.withLock { $0.state } }

    /// Whether leftovers fail the test; switch to `.off` for a test that checks only some of what happens.
    public var exhaustivity: Exhaustivity {
        get { recording.book.withLock { $0.exhaustivity } }
        set { recording.book.withLock { $0.exhaustivity = newValue } }
    }

    /// Sends `action`; with `assert`, asserts the first state it produces: `assert` mutates a copy of the
    /// previous state into the expected one.
    ///
    /// With exhaustivity on, states that arrived before this send and were not asserted fail the test here.
    public func send(
        _ action: R.Action, assert expectation: ((inout R.State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        skipPending(before: "send(\(action))", at: site)
        guard submit(action, at: site) else { return }
        if let expectation {
            await expectState(matching: nil, timeout: nil, time: nil, expectation, context: "send(\(action))", at: site)
        }
    }

    /// Asserts the next state: `assert` mutates a copy of the previous state into the expected one (without it:
    /// the state is the previous one, a new version that changed nothing).
    ///
    /// `timeout` is time on the tester's `TestClock` the clock may run for the state to arrive (nil: the clock
    /// stays, and the state must come by itself within `bound` of real time); `at` asserts when it came, as time
    /// since the clock's start. With exhaustivity off, states that do not satisfy the assertion are skipped.
    public func receive(
        timeout: Duration? = nil, at time: Duration? = nil, assert expectation: ((inout R.State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        await expectState(
            matching: nil, timeout: timeout, time: time, expectation ?? { _ in }, context: "receive",
            at: site)
    }

    /// Takes, without asserting them, the states that arrived so far (TCA's `skipReceivedActions`).
    public func skipReceivedStates() {
        recording.book.withLock { book in
            if let last = book.pending.last { book.state = last.snapshot.state }
            book.pending = []
        }
    }

    /// Ends the test: with exhaustivity on, fails for actions still scheduled, effects still running (waiting for
    /// them within `bound`, unless they all sleep on the test clock, which nothing will advance now) and states not
    /// asserted. Then stops the runtime, which cancels whatever still runs.
    public func finish(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        if exhaustivity == .on {
            let scheduled = recording.book.withLock { $0.scheduled }
            if !scheduled.isEmpty {
                let list = scheduled.map { "\($0.action) at \($0.time.offset)" }.joined(separator: ", ")
                recordFailure(
                    "\(scheduled.count) scheduled action(s) were never sent: \(list); let the clock run to "
                        + "their time (run() or advance(by:)) before finish()", at: site)
            }
            if await waitForEffectsToEnd(at: site) {
                skipPending(before: "finish()", at: site)
            }
        }
        runtime.stop()
    }

    /// Fails, without taking them, if states arrived that no assertion took.
    public func expectNoUnassertedStates(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let pending = recording.book.withLock { $0.pending }
        if !pending.isEmpty {
            recordFailure(
                "\(pending.count) state(s) were emitted but not asserted:\n"
                    + pending.map { "  " + $0.summary }.joined(separator: "\n"),
                at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
        }
    }

    /// Waits until no effect is running; fails (and returns false) if some still run after `bound`.
    @discardableResult
    public func waitForEffects(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async -> Bool {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        let ended = await waitUntil { [runtime] in runtime.inFlightEffectCount == 0 ? true : nil } ?? false
        if !ended {
            recordFailure(
                "\(runtime.inFlightEffectCount) effect(s) still running after \(bound); await or cancel them",
                at: site)
        }
        return ended
    }

    // MARK: - Sending

    /// Sends `action` and starts a probe that tells when its synchronous part is done; false (after recording the
    /// failure) when the runtime refused it.
    func submit(_ action: R.Action, at site: CallSite) -> Bool {
        recording.book.withLock { $0.unfinishedSends += 1 }
        do {
            try runtime.send(action)
        } catch {
            recording.book.withLock { $0.unfinishedSends -= 1 }
            recordFailure("send(\(action)) was refused: \(error)", at: site)
            return false
        }
        let probe = Probe()
        let recording = recording
        let token = runtime.observe { _ in
            guard probe.fire() else { return }
            recording.book.withLock { $0.unfinishedSends -= 1 }
            recording.changes.bump()
        }
        probe.hold(token)
        return true
    }

    /// Takes the states that arrived and were not asserted; with exhaustivity on, that is a failure.
    func skipPending(before what: String, at site: CallSite) {
        let (skipped, exhaustivity) = recording.book.withLock { book in
            defer {
                if let last = book.pending.last { book.state = last.snapshot.state }
                book.pending = []
            }
            return (book.pending, book.exhaustivity)
        }
        guard exhaustivity == .on, !skipped.isEmpty else { return }
        recordFailure(
            "\(skipped.count) state(s) arrived before \(what) and were not asserted (receive them, or "
                + "set exhaustivity to .off):\n" + skipped.map { "  " + $0.summary }.joined(separator: "\n"), at: site)
    }

    /// Waits for running effects to end; fails and returns false if they do not.
    private func waitForEffectsToEnd(at site: CallSite) async -> Bool {
        let clock = clock
        let ended = await waitUntil { [runtime, recording] () -> Bool? in
            let sends = recording.book.withLock { $0.unfinishedSends }
            let effects = runtime.inFlightEffectCount
            if sends == 0, effects == 0 { return true }
            // Asleep on a clock nothing will move again: they will never end by themselves.
            if sends == 0, let clock, clock.sleeperCount >= effects { return false }
            return nil
        }
        guard ended != true else { return true }
        let effects = runtime.inFlightEffectCount
        if let clock, let deadline = clock.nextDeadline, ended == false {
            recordFailure(
                "\(effects) effect(s) still running at the end of the test, asleep on the test clock (the "
                    + "next wakes at \(deadline.offset), now \(clock.now.offset)): let the clock run (run() or "
                    + "advance(by:)) and receive their states, cancel them, or set exhaustivity to .off", at: site)
        } else {
            recordFailure(
                "\(effects) effect(s) still running \(bound) after the end of the test (waiting on "
                    + "something other than the test clock?): let them end, cancel them, or set exhaustivity to .off",
                at: site)
        }
        return false
    }

    /// Re-evaluates `check` at every change and every few milliseconds until it returns a value; nil after `bound`.
    func waitUntil<T>(_ check: () -> T?) async -> T? {
        let start = ContinuousClock.now
        while true {
            let generation = recording.changes.generation
            if let value = check() { return value }
            let left = bound - (ContinuousClock.now - start)
            if left <= .zero { return nil }
            await recording.changes.wait(after: generation, atMost: min(left, .milliseconds(5)))
        }
    }
}
