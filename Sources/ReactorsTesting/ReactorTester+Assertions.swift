import Reactors

extension ReactorTester where R.Mutation: Equatable {
    /// Asserts that the next state was produced by `mutation` and is the previous state changed by `assert`.
    ///
    /// With exhaustivity off, states of other mutations (and ones that do not satisfy `assert`) are skipped.
    /// `timeout` and `at` work as in `receive(timeout:at:assert:)`.
    public func receive(
        _ mutation: R.Mutation, timeout: Duration? = nil, at time: Duration? = nil,
        assert expectation: ((inout R.State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        await expectState(
            matching: (mutation, { $0 == mutation }), timeout: timeout, time: time,
            expectation ?? { _ in }, context: "receive(\(mutation))", at: site)
    }
}

/// Why no state came for an assertion.
enum Absence: Error {
    /// Nothing that could still produce one is running (no effect, no send in progress, no merged source).
    case nothingRunning
    /// The clock ran `timeout` past the start of the wait without one.
    case clockRan(Duration)
    /// The real-time bound passed (effects still running).
    case bound
}

/// What a wait for a pending state found.
enum Look<R: Reactor> {
    /// The state asked for is there.
    case state(ReceivedState<R>)
    /// None is there, and nothing that could produce one runs.
    case nothingRunning
    /// None is there, and every running effect sleeps on the test clock: time may move on.
    case settled
}

/// What one look at a candidate state concluded.
private enum Verdict {
    case pass
    case fail(String)
}

extension ReactorTester {
    /// Waits for the next state (with exhaustivity off: the next one that satisfies the assertion), checks it and
    /// makes it the state the next assertion starts from.
    func expectState(
        matching mutation: (description: Any, matches: (R.Mutation) -> Bool)?, timeout: Duration?, time: Duration?,
        _ expectation: (inout R.State) throws -> Void, context: String, at site: CallSite
    ) async {
        if timeout != nil || time != nil, clock == nil {
            recordFailure(
                "\(context): `timeout:` and `at:` are time on a TestClock; make the tester with "
                    + "ReactorTester(reactor, clock: clock), the clock the reactor sleeps on", at: site)
            return
        }
        let exhaustive = exhaustivity == .on
        var index = 0
        var closest: String?
        while true {
            let next = await pendingState(at: index, clockMayRun: timeout, site: site)
            guard case .success(let received) = next else {
                if case .failure(let absence) = next {
                    reportAbsence(absence, context: context, closest: closest, timeout: timeout, at: site)
                }
                if !exhaustive { takePending(upTo: nil) }
                return
            }
            let previous = index == 0 ? state : recording.book.withLock { $0.pending[index - 1].snapshot.state }
            let verdict = check(
                received, previous: previous, mutation: mutation, time: time, exhaustive: exhaustive,
                expectation, context: context)
            switch verdict {
            case .pass:
                takePending(upTo: index)
                return
            case .fail(let message) where exhaustive:
                takePending(upTo: index)
                recordFailure(message, at: site)
                return
            case .fail(let message):
                // Non-exhaustive: look at the next state; report the last miss if none satisfies the assertion.
                closest = message
                index += 1
            }
        }
    }

    /// Checks one received state against the assertion made from `previous`.
    private func check(
        _ received: ReceivedState<R>, previous: R.State, mutation: (description: Any, matches: (R.Mutation) -> Bool)?,
        time: Duration?, exhaustive: Bool, _ expectation: (inout R.State) throws -> Void, context: String
    ) -> Verdict {
        if let mutation {
            guard let produced = received.mutation, mutation.matches(produced) else {
                let actual = received.mutation.map { "\($0)" } ?? "no mutation (a forced state)"
                return .fail(
                    "\(context): expected a state produced by \(mutation.description), but the next state "
                        + "was produced by \(actual): \(received.summary)")
            }
        }
        let actual = received.snapshot.state
        // Exhaustive: the assertion rebuilds the whole state from the previous one. Non-exhaustive (TCA's way):
        // it is applied to the actual state, so only what it sets is checked; pulse counts it bumps are put back.
        var expected = exhaustive ? previous : actual
        do {
            try expectation(&expected)
        } catch {
            return .fail("\(context): the assertion threw \(error)")
        }
        let assigned = Self.assignedPulses(from: exhaustive ? previous : actual, to: expected)
        if !exhaustive { Pulses.restore(Pulses.counts(of: actual), into: &expected) }
        if expected != actual {
            let diff = StateDiff(expected: expected, actual: actual, previous: previous)
            return .fail(
                diff.report(
                    headline: "\(context): the state (version \(received.snapshot.version)) is not "
                        + "the expected one"))
        }
        let delivered = Set(received.pulses)
        let missing = assigned.subtracting(delivered)
        let unasserted = exhaustive ? delivered.subtracting(assigned) : []
        if !missing.isEmpty || !unasserted.isEmpty {
            var message = "\(context): the pulses of version \(received.snapshot.version) are not the expected ones"
            if !missing.isEmpty {
                message += "; asserted but not delivered: " + missing.sorted().joined(separator: ", ")
            }
            if !unasserted.isEmpty {
                message +=
                    "; delivered but not asserted (assign them in the assertion): "
                    + unasserted.sorted().joined(separator: ", ")
            }
            return .fail(message)
        }
        if let time, let at = received.time, at.offset != time {
            return .fail(
                "\(context): the state (version \(received.snapshot.version)) came at \(at.offset) on the "
                    + "test clock, not at \(time)")
        }
        return .pass
    }

    /// The `@Pulse` properties whose count differs between two states: the ones assigned in between.
    static func assignedPulses(from before: R.State, to after: R.State) -> Set<String> {
        let old = Pulses.counts(of: before)
        let new = Pulses.counts(of: after)
        return Set(new.keys.filter { new[$0] != old[$0] })
    }

    /// Takes the pending states up to and including `index` (all of them for nil); the last becomes the base.
    func takePending(upTo index: Int?) {
        recording.book.withLock { book in
            let count = min(book.pending.count, index.map { $0 + 1 } ?? book.pending.count)
            guard count > 0 else { return }
            book.state = book.pending[count - 1].snapshot.state
            book.pending.removeFirst(count)
        }
    }

    /// Records why no (satisfying) state came.
    private func reportAbsence(
        _ absence: Absence, context: String, closest: String?, timeout: Duration?,
        at site: CallSite
    ) {
        var message: String
        switch absence {
        case .nothingRunning:
            message =
                "\(context): no state arrived, and nothing that could produce one is running (no effect, "
                + "no merged source)"
        case .clockRan(let duration):
            message =
                "\(context): no state arrived within \(duration) on the test clock (now "
                + "\(clock?.now.offset ?? .zero))"
        case .bound:
            message =
                "\(context): no state arrived within \(bound) of real time; \(runtime.inFlightEffectCount) "
                + "effect(s) running"
            if let clock {
                message += ", \(clock.sleeperCount) task(s) asleep on the test clock"
                if let deadline = clock.nextDeadline, timeout == nil {
                    message += " (the next wakes at \(deadline.offset)): "
                    // `send` has no timeout: a state that comes only with time is a later one, for `receive`.
                    message +=
                        context.hasPrefix("send(")
                        ? "the action produced no state of its own; assert later states with receive(timeout:)"
                        : "pass `timeout:` to let the clock run"
                }
            }
        }
        if let closest { message += "\nThe last state received did not satisfy the assertion: " + closest }
        recordFailure(message, at: site)
    }

    /// The pending state at `index`, waiting for it: in real time, and with `clockMayRun`, also letting the test
    /// clock run that long past now, deadline by deadline.
    func pendingState(
        at index: Int, clockMayRun: Duration?, site: CallSite
    ) async -> Result<ReceivedState<R>, Absence> {
        let limit = clockMayRun.flatMap { duration in clock.map { $0.now.advanced(by: duration) } }
        while true {
            let look = await waitUntil { () -> Look<R>? in
                let (pending, sends, stopped, scheduled) = recording.book.withLock { book in
                    (book.pending, book.unfinishedSends, book.isStopped, book.scheduled.first?.time)
                }
                if index < pending.count { return .state(pending[index]) }
                if stopped { return .nothingRunning }
                if sends == 0, runtime.inFlightEffectCount == 0, !runtime.hasMergedSources {
                    // With the clock running, a scheduled action or a sleeper (a merged source's timer) may still act.
                    guard let limit, let clock else { return .nothingRunning }
                    if clock.sleeperCount == 0, scheduled.map({ $0 > limit }) ?? true { return .nothingRunning }
                }
                if limit != nil, isSettled { return .settled }
                return nil
            }
            switch look {
            case .state(let received)?:
                return .success(received)
            case .nothingRunning?:
                return .failure(.nothingRunning)
            case nil:
                return .failure(.bound)
            case .settled?:
                guard let clock, let limit, let duration = clockMayRun else { return .failure(.bound) }
                if let next = nextEventTime(), next <= limit {
                    await step(to: next, at: site)
                } else if clock.now < limit {
                    await step(to: limit, at: site)
                } else {
                    let arrived = recording.book.withLock { index < $0.pending.count ? $0.pending[index] : nil }
                    return arrived.map { .success($0) } ?? .failure(.clockRan(duration))
                }
            }
        }
    }
}
