import ReactorServerTesting
import Reactors
import ReactorsTesting
import Synchronization
import Testing

@Suite(.offThePool) struct TestClockTests {
    @Test func sleepersWakeInDeadlineOrderOnlyWhenTimeReachesThem() async throws {
        let clock = TestClock()
        let woke = EventLog()
        let tasks = [3, 1, 2].map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                woke.append("\(seconds)")
            }
        }
        await clock.waitForSleepers(3)
        #expect(clock.nextDeadline == TestClock.Instant(offset: .seconds(1)))
        await clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 3)
        await clock.advance(by: .milliseconds(1))
        try await waitFor("the 1 s sleeper to wake") { try await tasks[1].value }
        #expect(woke.all == ["1"])
        await clock.advance(to: TestClock.Instant(offset: .seconds(2)))
        try await waitFor("the 2 s sleeper to wake") { try await tasks[2].value }
        #expect(woke.all == ["1", "2"])
        await clock.run()
        try await waitFor("the last sleeper to wake") { try await tasks[0].value }
        #expect(woke.all == ["1", "2", "3"])
        #expect(clock.now == TestClock.Instant(offset: .seconds(3)))
        #expect(clock.nextDeadline == nil)
        await clock.advance(to: TestClock.Instant(offset: .seconds(1)))
        #expect(clock.now == TestClock.Instant(offset: .seconds(3)), "time never goes back")
    }

    @Test func cancellingASleeperThrowsAndRemovesIt() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aDeadlineAlreadyPassedDoesNotSuspend() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(2)))
        #expect(clock.sleeperCount == 0)
    }
}

/// A reactor made to exercise the tester: synchronous mutations, a delay on the test clock, a list, a pulse.
struct TesterSubject: Reactor {
    enum Action: Codable, Sendable, Equatable {
        case set(Int)
        /// Spinner on, `value` after `milliseconds` on the clock, spinner off; a new one cancels the one in flight.
        case later(Int, milliseconds: Int)
        case add(String)
        case check(Int)
        case alert(String)
        /// An effect that waits for the gate, forever if nobody opens it.
        case hang
    }

    enum Mutation: Codable, Sendable, Equatable {
        case value(Int)
        case loading(Bool)
        case add(String)
        case check(Int)
        case alert(String)
    }

    struct Item: Codable, Sendable, Equatable {
        var title: String
        var done = false
    }

    struct State: Codable, Sendable, Equatable {
        var value = 0
        var isLoading = false
        var items: [Item] = []
        @Pulse var alert: String? = nil
    }

    let initialState = State()
    let clock: TestClock
    let gate: Gate

    init(clock: TestClock = TestClock(), gate: Gate = Gate()) {
        self.clock = clock
        self.gate = gate
    }

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .set(let value): .just(.value(value))
        case .later(let value, let milliseconds):
            Effect.concat([
                .just(.loading(true)),
                Effect.just(.value(value)).delay(for: .milliseconds(milliseconds), clock: clock),
                .just(.loading(false)),
            ]).cancellable(id: "later", cancelInFlight: true)
        case .add(let title): .just(.add(title))
        case .check(let index): .just(.check(index))
        case .alert(let text): .just(.alert(text))
        case .hang: .run { [gate] _ in try await gate.wait() }
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .value(let value): state.value = value
        case .loading(let isLoading): state.isLoading = isLoading
        case .add(let title): state.items.append(Item(title: title))
        case .check(let index): state.items[index].done = true
        case .alert(let text): state.alert = text
        }
        return state
    }
}

/// The text of a recorded issue (what the tester said).
func text(of issue: Issue) -> String { issue.comments.map(\.rawValue).joined(separator: "\n") }

@Suite(.offThePool) struct ReactorTesterTests {
    typealias Item = TesterSubject.Item

    @Test func eachAssertionIsAMutationOfThePreviousState() async {
        let tester = ReactorTester(TesterSubject())
        await tester.send(.set(3)) { $0.value = 3 }
        await tester.send(.add("milk")) { $0.items = [Item(title: "milk")] }
        await tester.send(.add("eggs")) { $0.items.append(Item(title: "eggs")) }
        await tester.send(.check(1)) { $0.items[1].done = true }
        #expect(tester.state.items == [Item(title: "milk"), Item(title: "eggs", done: true)])
        await tester.finish()
    }

    @Test func aWrongAssertionFailsAtTheCallWithTheDifferingPaths() async {
        let tester = ReactorTester(TesterSubject())
        await tester.send(.add("milk")) { $0.items = [Item(title: "milk")] }
        let line = #line + 2
        await withKnownIssue {
            await tester.send(.check(0)) { $0.value = 1 }
        } matching: { issue in
            let said = text(of: issue)
            return issue.sourceLocation?.line == line && issue.sourceLocation?.fileID == #fileID
                && said.contains("send(check(0)): the state (version 2) is not the expected one (expected → actual):")
                && said.contains("\n  value: 1 → 0") && said.contains("\n  items[0].done: false → true")
                && said.contains(
                    #"expected: {"value":1,"isLoading":false,"items":[{"title":"milk","done":false}],"#
                        + #""alert":null}"#)
        }
        // After a failure the tester goes on from the actual state, so one mistake reports once.
        await tester.send(.set(2)) { $0.value = 2 }
        #expect(tester.state.items == [Item(title: "milk", done: true)])
        await tester.finish()
    }

    @Test func missingAndExtraElementsShowAsAbsent() async {
        let tester = ReactorTester(TesterSubject())
        await withKnownIssue {
            await tester.send(.add("milk")) { $0.items = [Item(title: "milk"), Item(title: "eggs")] }
        } matching: { issue in
            text(of: issue).contains(#"items[1]: {"title":"eggs","done":false} → (absent)"#)
        }
        await tester.finish()
    }

    @Test func anAssignedPulseIsAssertedAndAnUnassertedOneFails() async {
        let tester = ReactorTester(TesterSubject())
        await tester.send(.alert("Saved.")) { $0.alert = "Saved." }
        // The same text again is a new pulse: the assertion must assign it again.
        await withKnownIssue {
            await tester.send(.alert("Saved."))
            await tester.receive()
        } matching: { issue in
            text(of: issue).contains("alert (@Pulse): the assertion assigns it 0 times, the reactor assigned it 1 time")
        }
        await tester.send(.alert("Saved.")) { $0.alert = "Saved." }
        await tester.finish()
    }

    @Test func receiveWithATimeoutLetsTheTestClockRunUntilTheStateComes() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        await tester.send(.later(5, milliseconds: 500)) { $0.isLoading = true }
        await tester.receive(.value(5), timeout: .seconds(2), at: .milliseconds(500)) { $0.value = 5 }
        #expect(clock.now == TestClock.Instant(offset: .milliseconds(500)), "the clock stops where the state came")
        await tester.receive(.loading(false)) { $0.isLoading = false }
        await tester.finish()
    }

    @Test func receiveFailsWhenTheStateIsLaterThanTheTimeout() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        await tester.send(.later(5, milliseconds: 500)) { $0.isLoading = true }
        await withKnownIssue {
            await tester.receive(timeout: .milliseconds(499)) { $0.value = 5 }
        } matching: { issue in
            text(of: issue).contains("receive: no state arrived within 0.499 seconds on the test clock")
        }
        #expect(clock.now == TestClock.Instant(offset: .milliseconds(499)))
        await tester.receive(timeout: .milliseconds(1), at: .milliseconds(500)) { $0.value = 5 }
        await tester.receive { $0.isLoading = false }
        await tester.finish()
    }

    @Test func withoutATimeoutTheClockStaysAndTheFailureSaysWhatSleeps() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock, timeout: .milliseconds(300))
        await tester.send(.later(5, milliseconds: 500)) { $0.isLoading = true }
        await clock.waitForSleepers()
        await withKnownIssue {
            await tester.receive { $0.value = 5 }
        } matching: { issue in
            let said = text(of: issue)
            return said.contains("1 effect(s) running, 1 task(s) asleep on the test clock")
                && said.contains("the next wakes at 0.5 seconds): pass `timeout:` to let the clock run")
        }
        #expect(clock.now == TestClock.Instant(offset: .zero))
        tester.exhaustivity = .off
        await tester.finish()
    }

    @Test func receiveFailsAtOnceWhenNothingCouldProduceAState() async {
        // An hour: only the fast path can end this wait.
        let tester = ReactorTester(TesterSubject(), timeout: .seconds(3600))
        await tester.send(.set(1)) { $0.value = 1 }
        await withKnownIssue {
            await tester.receive()
        } matching: { issue in
            text(of: issue).contains("receive: no state arrived, and nothing that could produce one is running")
        }
        await tester.finish()
    }

    @Test func receiveOfAMutationChecksWhichMutationProducedTheState() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        await tester.send(.later(5, milliseconds: 100)) { $0.isLoading = true }
        await withKnownIssue {
            await tester.receive(.loading(false), timeout: .milliseconds(100)) { $0.value = 5 }
        } matching: { issue in
            text(of: issue).contains(
                "receive(loading(false)): expected a state produced by loading(false), but the "
                    + "next state was produced by value(5)")
        }
        await tester.receive(.loading(false)) { $0.isLoading = false }
        await tester.finish()
    }

    @Test func exhaustiveStatesNotAssertedBeforeTheNextSendFail() async {
        let tester = ReactorTester(TesterSubject())
        await tester.send(.set(1))
        await withKnownIssue {
            await tester.send(.set(2)) { $0.value = 2 }
        } matching: { issue in
            let said = text(of: issue)
            return said.contains("1 state(s) arrived before send(set(2)) and were not asserted")
                && said.contains(#"version 1 from value(1): {"value":1,"isLoading":false,"items":[],"alert":null}"#)
        }
        await tester.finish()
    }

    @Test func exhaustiveFinishFailsForStatesNotAsserted() async {
        let tester = ReactorTester(TesterSubject())
        await tester.send(.alert("hi"))
        await withKnownIssue {
            await tester.finish()
        } matching: { issue in
            text(of: issue).contains("1 state(s) arrived before finish() and were not asserted")
                && text(of: issue).contains("(pulses: alert)")
        }
    }

    @Test func exhaustiveFinishFailsAtOnceForEffectsAsleepOnTheTestClock() async {
        let clock = TestClock()
        // An hour: the tester must see the effect sleeps on a clock nothing moves, not wait for it.
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock, timeout: .seconds(3600))
        await tester.send(.later(5, milliseconds: 500)) { $0.isLoading = true }
        await withKnownIssue {
            await tester.finish()
        } matching: { issue in
            text(of: issue).contains(
                "1 effect(s) still running at the end of the test, asleep on the test clock (the "
                    + "next wakes at 0.5 seconds, now 0.0 seconds)")
        }
        #expect(tester.runtime.isStopped)
    }

    @Test func exhaustiveFinishFailsForEffectsThatDoNotEnd() async {
        let gate = Gate()
        let tester = ReactorTester(TesterSubject(gate: gate), timeout: .milliseconds(200))
        await tester.send(.hang)
        await withKnownIssue {
            await tester.finish()
        } matching: { issue in
            text(of: issue).contains("1 effect(s) still running 0.2 seconds after the end of the test")
        }
        gate.open()
    }

    @Test func exhaustiveFinishFailsForScheduledActionsNeverSent() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        tester.schedule(.set(1), at: .seconds(1))
        await withKnownIssue {
            await tester.finish()
        } matching: { issue in
            text(of: issue).contains("1 scheduled action(s) were never sent: set(1) at 1.0 seconds")
        }
    }

    @Test func nonExhaustiveChecksOnlyWhatTheAssertionSetsAndSkipsTheRest() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock, exhaustivity: .off)
        await tester.send(.add("milk"))
        await tester.send(.set(7)) { $0.value = 7 }
        // Skips the spinner's state to the one that satisfies the assertion.
        await tester.send(.later(9, milliseconds: 300))
        await tester.receive(timeout: .seconds(1)) { $0.value = 9 }
        #expect(tester.state.isLoading)
        await withKnownIssue {
            await tester.receive(timeout: .seconds(1)) { $0.value = 10 }
        } matching: { issue in
            let said = text(of: issue)
            return said.contains("receive: no state arrived, and nothing that could produce one is running")
                && said.contains("The last state received did not satisfy the assertion")
                && said.contains("value: 10 → 9")
        }
        // The pulse is asserted when the assertion assigns it, and fails when it was not delivered.
        await tester.send(.alert("a")) { $0.alert = "a" }
        await withKnownIssue {
            await tester.send(.set(1)) { $0.alert = "a" }
        } matching: { issue in
            text(of: issue).contains("asserted but not delivered: alert")
        }
        // Whatever still runs is cancelled.
        await tester.send(.later(1, milliseconds: 1_000))
        await tester.finish()
        #expect(tester.runtime.isStopped)
    }

    @Test func actionsScheduledAtVirtualTimesRunWithTheClock() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        tester.schedule(.set(1), at: .seconds(1))
        tester.schedule(.set(3), at: .seconds(3))
        tester.schedule(.set(2), at: .seconds(2))
        await tester.advance(by: .milliseconds(2_500))
        await tester.receive(at: .seconds(1)) { $0.value = 1 }
        await tester.receive(at: .seconds(2)) { $0.value = 2 }
        tester.expectNoUnassertedStates()
        #expect(clock.now == TestClock.Instant(offset: .milliseconds(2_500)))
        await tester.run()
        await tester.receive(at: .seconds(3)) { $0.value = 3 }
        await tester.finish()
    }

    /// RxTest's marble test of a cancelling effect: the second choice at 300 ms cancels the first's delay.
    @Test func aScheduledActionCancelsTheEffectInFlightOnTheClock() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        tester.schedule(.later(1, milliseconds: 500), at: .zero)
        tester.schedule(.later(2, milliseconds: 500), at: .milliseconds(300))
        await tester.run()
        await tester.receive(.loading(true), at: .zero) { $0.isLoading = true }
        await tester.receive(.loading(true), at: .milliseconds(300))
        await tester.receive(.value(2), at: .milliseconds(800)) { $0.value = 2 }
        await tester.receive(.loading(false), at: .milliseconds(800)) { $0.isLoading = false }
        await tester.finish()
    }

    @Test func aTimeAssertionFails() async {
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        tester.schedule(.set(1), at: .seconds(1))
        await tester.run()
        await withKnownIssue {
            await tester.receive(at: .seconds(2)) { $0.value = 1 }
        } matching: { issue in
            text(of: issue).contains("came at 1.0 seconds on the test clock, not at 2.0 seconds")
        }
        await tester.finish()
    }

    @Test func clockOperationsWithoutAClockSaySo() async {
        let tester = ReactorTester(TesterSubject())
        await withKnownIssue {
            tester.schedule(.set(1), at: .seconds(1))
            await tester.receive(timeout: .seconds(1))
            await tester.advance(by: .seconds(1))
        } matching: { issue in
            text(of: issue).contains("needs a TestClock") || text(of: issue).contains("are time on a TestClock")
        }
        await tester.finish()
    }

    @Test func aRefusedSendFails() async {
        let tester = ReactorTester(TesterSubject())
        tester.runtime.stop()
        await withKnownIssue {
            await tester.send(.set(1)) { $0.value = 1 }
        } matching: { issue in
            text(of: issue).contains("send(set(1)) was refused")
        }
    }

    @Test func theWholeStateFormStillWorks() async {
        let tester = ReactorTester(CountingReactor())
        await tester.send(.increaseTwice, expecting: .init(value: 1), .init(value: 2))
        await tester.send(.decrease)
        await tester.receive(.init(value: 1))
        await withKnownIssue {
            await tester.send(.increase, expecting: .init(value: 3))
        } matching: { issue in
            text(of: issue).contains("value: 3 → 2")
        }
        await tester.finish()
    }

    @Test func forcedStatesAreReceivedWithoutAMutation() async throws {
        let tester = ReactorTester(TesterSubject())
        tester.runtime.isStubEnabled = true
        var forced = TesterSubject.State()
        forced.value = 42
        try tester.runtime.forceState(forced)
        // A forced state counts every pulse as assigned.
        await tester.receive {
            $0.value = 42
            $0.alert = nil
        }
        await withKnownIssue {
            try? tester.runtime.forceState(forced)
            await tester.receive(.value(42))
        } matching: { issue in
            text(of: issue).contains("but the next state was produced by no mutation (a forced state)")
        }
        await tester.finish()
    }
}
