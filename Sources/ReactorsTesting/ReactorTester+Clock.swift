import Reactors

// Virtual time: actions scheduled on the test clock (ReactorKit's RxTest style) and a clock that runs deadline by
// deadline, letting the effects it wakes act before time moves on.
extension ReactorTester {
    /// Schedules `action` to be sent when the test clock reaches `time` (time since the clock's start), as RxTest's
    /// hot observables do; `advance`, `run` and `receive(timeout:)` send it on their way.
    ///
    /// ```swift
    /// tester.schedule(.increase, at: .seconds(1))
    /// tester.schedule(.decrease, at: .seconds(3))
    /// await tester.run()
    /// await tester.receive(at: .seconds(1)) { $0.value = 1 }
    /// await tester.receive(at: .seconds(3)) { $0.value = 0 }
    /// ```
    /// At one instant, the sleepers due then wake first, then the actions scheduled for it are sent in the order
    /// they were scheduled.
    public func schedule(
        _ action: R.Action, at time: Duration,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        guard clock != nil else {
            recordFailure(
                "schedule(\(action), at: \(time)) needs a TestClock: make the tester with "
                    + "ReactorTester(reactor, clock: clock)",
                at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
            return
        }
        recording.book.withLock { book in
            book.nextOrder += 1
            book.scheduled.append(
                ScheduledAction(
                    action: action, time: TestClock.Instant(offset: time),
                    order: book.nextOrder))
            book.scheduled.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        }
    }

    /// Lets the test clock run for `duration`: deadline by deadline, each time waking the effects due, sending the
    /// actions scheduled for then, and waiting until every running effect sleeps on the clock again or has ended.
    public func advance(
        by duration: Duration,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard let clock else { return missingClock("advance(by: \(duration))", at: site) }
        await runClock(until: clock.now.advanced(by: duration), at: site)
    }

    /// Lets the test clock run until nothing sleeps on it and nothing is scheduled (at most 10,000 steps).
    public func run(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard clock != nil else { return missingClock("run()", at: site) }
        await runClock(until: nil, at: site)
    }

    /// True when no send is half done and every running effect sleeps on the test clock (or none runs): time can
    /// move on without leaving an effect behind. Counted, not traced: every task asleep on the clock is taken for a
    /// running effect's, so one effect with two tasks asleep, or a merged source's timer, can stand in for another
    /// effect still at work; and an effect that awaits a nested cancellable effect never counts as asleep.
    var isSettled: Bool {
        guard recording.book.withLock({ $0.unfinishedSends }) == 0 else { return false }
        let effects = runtime.inFlightEffectCount
        guard effects > 0 else { return true }
        guard let clock else { return false }
        return clock.sleeperCount >= effects
    }

    /// Waits (within `bound`) until `isSettled`; an effect waiting on something else holds it up that long.
    func settle() async {
        _ = await waitUntil { isSettled ? true : nil }
    }

    /// The earliest time something happens on the clock: a sleeper's deadline or a scheduled action.
    func nextEventTime() -> TestClock.Instant? {
        let scheduled = recording.book.withLock { $0.scheduled.first?.time }
        switch (clock?.nextDeadline, scheduled) {
        case (let sleeper?, let action?): return min(sleeper, action)
        case (let sleeper, let action): return sleeper ?? action
        }
    }

    /// Moves the clock to `instant`, wakes who is due, sends the actions scheduled until then, and settles.
    func step(to instant: TestClock.Instant, at site: CallSite) async {
        guard let clock else { return }
        await settle()
        await clock.advance(to: instant)
        await settle()
        let due = recording.book.withLock { book in
            let now = clock.now
            let due = book.scheduled.prefix { $0.time <= now }
            book.scheduled.removeFirst(due.count)
            return Array(due)
        }
        // A refused scheduled action is blamed on the call that ran the clock to it.
        for scheduled in due { _ = submit(scheduled.action, at: site) }
        if !due.isEmpty { await settle() }
    }

    /// Runs the clock step by step until `target` (or, for nil, until nothing is left to happen).
    private func runClock(until target: TestClock.Instant?, at site: CallSite) async {
        guard let clock else { return }
        await step(to: clock.now, at: site)
        for _ in 0..<10_000 {
            guard let next = nextEventTime(), target.map({ next <= $0 }) ?? true else {
                if let target, clock.now < target { await step(to: target, at: site) }
                return
            }
            await step(to: next, at: site)
        }
        recordFailure(
            "the test clock still had work after 10,000 steps (now \(clock.now.offset)): a timer that "
                + "re-arms itself forever? Use advance(by:) to run it for a while", at: site)
    }

    /// Records that a clock operation was asked of a tester without a clock.
    private func missingClock(_ what: String, at site: CallSite) {
        recordFailure(
            "\(what) needs a TestClock: make the tester with ReactorTester(reactor, clock: clock), the clock "
                + "the reactor sleeps on", at: site)
    }
}
