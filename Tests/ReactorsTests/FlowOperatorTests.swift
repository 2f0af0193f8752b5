import ReactorServerTesting
import Reactors
import ReactorsTesting
import Synchronization
import Testing

/// A reactor whose flows a test writes: actions type text or load after a second on the test clock.
struct FlowReactor: Reactor {
    enum Action: Codable, Sendable, Equatable {
        case type(String)
        /// Appends "loaded n" one second later (on the test clock).
        case load(Int)
        /// Emits each text as a mutation from one async effect, in a row.
        case burst([String])
    }

    enum Mutation: Codable, Sendable, Equatable { case append(String) }
    struct State: Codable, Sendable, Equatable { var log: [String] = [] }

    let initialState = State()
    let clock: TestClock
    var actions: @Sendable (Flow<Action>, TestClock) -> Flow<Action> = { flow, _ in flow }
    var mutations: @Sendable (Flow<Mutation>, TestClock) -> Flow<Mutation> = { flow, _ in flow }

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .type(let text): .just(.append(text))
        case .load(let number): Effect.just(.append("loaded \(number)")).delay(for: .seconds(1), clock: clock)
        case .burst(let texts): .run { emit in for text in texts { await emit(.append(text)) } }
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        if case .append(let text) = mutation { state.log.append(text) }
        return state
    }

    func transform(action: Flow<Action>) -> Flow<Action> { actions(action, clock) }
    func transform(mutation: Flow<Mutation>) -> Flow<Mutation> { mutations(mutation, clock) }
}

/// What an action's completion reported: the log it saw, or the error.
typealias Completions = Recorder<Result<Snapshot<FlowReactor.State>, ReactorError>>

extension Recorder where Value == Result<Snapshot<FlowReactor.State>, ReactorError> {
    /// The logs of the completions so far, "error" for a failure.
    var logs: [[String]] { values.map { (try? $0.get().state.log) ?? ["error"] } }
}

@Suite(.offThePool) struct DebounceTests {
    static func reactor(_ clock: TestClock) -> FlowReactor {
        FlowReactor(clock: clock, actions: { flow, clock in flow.debounce(for: .milliseconds(300), clock: clock) })
    }

    @Test func onlyTheLastActionOfABurstRunsOnceTheClockIsQuietForTheDueTime() async throws {
        let clock = TestClock()
        let runtime = ReactorRuntime(Self.reactor(clock))
        let completions = Completions()
        for text in ["s", "sw", "swift"] { try runtime.send(.type(text), completion: completions.record) }
        // The two replaced ones complete at once with nothing done; the last one waits on the clock.
        let early = try await completions.waitForCount(2)
        #expect(early.map { try? $0.get().state.log } == [[], []])
        try await eventually("only the last hold to sleep on the clock") { clock.sleeperCount == 1 }
        await clock.advance(by: .milliseconds(299))
        #expect(clock.sleeperCount == 1, "released before the due time")
        #expect(runtime.currentState.log == [])
        await clock.advance(by: .milliseconds(1))
        _ = try await completions.waitForCount(3)
        #expect(completions.logs == [[], [], ["swift"]])
        #expect(runtime.currentState.log == ["swift"])
        runtime.stop()
    }

    @Test func aNewerActionRestartsTheWait() async throws {
        let clock = TestClock()
        let runtime = ReactorRuntime(Self.reactor(clock))
        try runtime.send(.type("a"))
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(200))
        try runtime.send(.type("b"))
        try await eventually("a's hold to give way to b's") {
            clock.sleeperCount == 1 && runtime.inFlightEffectCount == 1
        }
        await clock.advance(by: .milliseconds(200))
        #expect(runtime.currentState.log == [], "b waited only 200 ms of its 300")
        await clock.advance(by: .milliseconds(100))
        try await runtime.settle()
        #expect(runtime.currentState.log == ["b"])
        runtime.stop()
    }

    @Test func stoppingDropsTheHeldActionAndItsCompletionSaysStopped() async throws {
        let clock = TestClock()
        let runtime = ReactorRuntime(Self.reactor(clock))
        let completions = Completions()
        try runtime.send(.type("held"), completion: completions.record)
        await clock.waitForSleepers()
        #expect(runtime.inFlightEffectCount == 1, "a held action counts as one of its effects")
        runtime.stop()
        let results = try await completions.waitForCount(1)
        #expect(results.first.map { if case .failure(.stopped) = $0 { true } else { false } } == true)
        try await runtime.settle()
        #expect(clock.sleeperCount == 0)
        #expect(runtime.currentState.log == [])
    }

    @Test func stubModeCancelsTheHeldActionAndItCompletesWithNothingDone() async throws {
        let clock = TestClock()
        let runtime = ReactorRuntime(Self.reactor(clock))
        let completions = Completions()
        try runtime.send(.type("held"), completion: completions.record)
        await clock.waitForSleepers()
        runtime.isStubEnabled = true
        _ = try await completions.waitForCount(1)
        #expect(completions.logs == [[]])
        runtime.isStubEnabled = false
        await clock.run()
        try await runtime.settle()
        #expect(runtime.currentState.log == [])
        runtime.stop()
    }

    @Test func mutationsOfOneEffectAreDebouncedAndTheActionCompletesAfterTheLast() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(
            clock: clock,
            mutations: { flow, clock in
                flow.debounce(for: .seconds(1), clock: clock)
            })
        let runtime = ReactorRuntime(reactor)
        let completions = Completions()
        try runtime.send(.burst(["1", "2", "3"]), completion: completions.record)
        try await eventually("the last mutation's hold alone to sleep") {
            clock.sleeperCount == 1 && runtime.inFlightEffectCount == 1
        }
        #expect(completions.count == 0, "the action completed while its last mutation was held")
        await clock.advance(by: .seconds(1))
        _ = try await completions.waitForCount(1)
        #expect(completions.logs == [["3"]])
        runtime.stop()
    }
}

@Suite(.offThePool) struct ThrottleTests {
    @Test func theFirstPassesAtOnceAndTheLatestOfTheWindowWhenItEnds() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(
            clock: clock,
            actions: { flow, clock in
                flow.throttle(for: .seconds(1), clock: clock)
            })
        let runtime = ReactorRuntime(reactor)
        let completions = Completions()
        for text in ["a", "b", "c"] { try runtime.send(.type(text), completion: completions.record) }
        #expect(runtime.currentState.log == ["a"])
        // b gave way to c, which waits for the end of the window a opened.
        _ = try await completions.waitForCount(2)
        #expect(completions.logs == [["a"], ["a"]])
        try await eventually("c alone to wait for the window's end") {
            clock.sleeperCount == 1 && runtime.inFlightEffectCount == 1
        }
        await clock.advance(by: .milliseconds(999))
        #expect(runtime.currentState.log == ["a"])
        await clock.advance(by: .milliseconds(1))
        _ = try await completions.waitForCount(3)
        #expect(runtime.currentState.log == ["a", "c"])
        // c's release opened a new window: d waits for its end too.
        try runtime.send(.type("d"))
        await clock.waitForSleepers()
        #expect(runtime.currentState.log == ["a", "c"])
        await clock.advance(by: .seconds(1))
        try await runtime.settle()
        #expect(runtime.currentState.log == ["a", "c", "d"])
        // Once a window ended with nothing held, the next element passes at once.
        await clock.advance(by: .seconds(1))
        try runtime.send(.type("e"))
        #expect(runtime.currentState.log == ["a", "c", "d", "e"])
        runtime.stop()
    }

    @Test func withoutLatestEveryElementInsideAWindowIsDropped() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(
            clock: clock,
            actions: { flow, clock in
                flow.throttle(for: .seconds(1), clock: clock, latest: false)
            })
        let runtime = ReactorRuntime(reactor)
        for text in ["a", "b", "c"] { try runtime.send(.type(text)) }
        #expect(runtime.inFlightEffectCount == 0, "nothing is held without latest")
        await clock.advance(by: .seconds(1))
        try runtime.send(.type("d"))
        #expect(runtime.currentState.log == ["a", "d"])
        runtime.stop()
    }

    @Test func stoppingCancelsTheHeldLatestElement() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(
            clock: clock,
            actions: { flow, clock in
                flow.throttle(for: .seconds(1), clock: clock)
            })
        let runtime = ReactorRuntime(reactor)
        let completions = Completions()
        try runtime.send(.type("a"))
        try runtime.send(.type("b"), completion: completions.record)
        await clock.waitForSleepers()
        runtime.stop()
        let results = try await completions.waitForCount(1)
        #expect(results.first.map { if case .failure(.stopped) = $0 { true } else { false } } == true)
        try await runtime.settle()
        #expect(clock.sleeperCount == 0)
        #expect(runtime.currentState.log == ["a"])
    }
}

@Suite(.offThePool) struct RemoveDuplicatesTests {
    @Test func anElementEqualToTheLastThatPassedIsDropped() throws {
        let reactor = FlowReactor(clock: TestClock(), actions: { flow, _ in flow.removeDuplicates() })
        let runtime = ReactorRuntime(reactor)
        let completions = Completions()
        for text in ["a", "a", "b", "a", "a"] { try runtime.send(.type(text), completion: completions.record) }
        #expect(runtime.currentState.log == ["a", "b", "a"])
        #expect(completions.logs == [["a"], ["a"], ["a", "b"], ["a", "b", "a"], ["a", "b", "a"]])
        runtime.stop()
    }

    @Test func aPredicateDecidesWhatCountsAsARepeat() throws {
        let reactor = FlowReactor(
            clock: TestClock(),
            mutations: { flow, _ in
                flow.removeDuplicates { previous, next in
                    guard case .append(let old) = previous, case .append(let new) = next else { return false }
                    return old.lowercased() == new.lowercased()
                }
            })
        let runtime = ReactorRuntime(reactor)
        for text in ["Swift", "swift", "SWIFT", "Rust"] { try runtime.send(.type(text)) }
        #expect(runtime.currentState.log == ["Swift", "Rust"])
        runtime.stop()
    }

    @Test func mergedElementsShareTheStateOnlyWhenMergedBeforeIt() async throws {
        let (before, beforeFeed) = AsyncStream<FlowReactor.Action>.makeStream()
        let (after, afterFeed) = AsyncStream<FlowReactor.Action>.makeStream()
        let reactor = FlowReactor(
            clock: TestClock(),
            actions: { flow, _ in
                flow.merge(with: before).removeDuplicates().merge(with: after)
            })
        let runtime = ReactorRuntime(reactor)
        try runtime.send(.type("x"))
        beforeFeed.yield(.type("x"))
        beforeFeed.yield(.type("y"))
        try await eventually("y from the source merged before to be reduced") {
            runtime.currentState.log == ["x", "y"]
        }
        afterFeed.yield(.type("y"))
        try await eventually("the repeat from the source merged after to pass") {
            runtime.currentState.log == ["x", "y", "y"]
        }
        runtime.stop()
    }
}

@Suite(.offThePool) struct FlatMapLatestTests {
    @Test func aNewActionCancelsWhatThePreviousOneStillRuns() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(clock: clock, actions: { flow, _ in flow.flatMapLatest() })
        let runtime = ReactorRuntime(reactor)
        let completions = Completions()
        try runtime.send(.load(1), completion: completions.record)
        await clock.waitForSleepers()
        try runtime.send(.load(2), completion: completions.record)
        // load(1)'s delay is cancelled: it completes with nothing done, and only load(2) sleeps.
        _ = try await completions.waitForCount(1)
        #expect(completions.logs == [[]])
        try await eventually("load(1)'s task to end") { clock.sleeperCount == 1 && runtime.inFlightEffectCount == 1 }
        await clock.advance(by: .seconds(1))
        _ = try await completions.waitForCount(2)
        #expect(runtime.currentState.log == ["loaded 2"])
        // An action whose effect ended is not touched: the next one finds nothing of it to cancel.
        try runtime.send(.type("t"))
        try runtime.send(.load(3))
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await runtime.settle()
        #expect(runtime.currentState.log == ["loaded 2", "t", "loaded 3"])
        runtime.stop()
    }

    @Test func stoppingEndsTheLatestActionsEffectAndNothingSwitchesAfter() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(clock: clock, actions: { flow, _ in flow.flatMapLatest() })
        let runtime = ReactorRuntime(reactor)
        let completions = Completions()
        try runtime.send(.load(1), completion: completions.record)
        await clock.waitForSleepers()
        runtime.stop()
        let results = try await completions.waitForCount(1)
        #expect(results.first.map { if case .failure(.stopped) = $0 { true } else { false } } == true)
        #expect(throws: ReactorError.stopped) { try runtime.send(.load(2)) }
        try await runtime.settle()
        #expect(clock.sleeperCount == 0)
        #expect(runtime.currentState.log == [])
    }

    @Test func withoutItBothEffectsRun() async throws {
        let clock = TestClock()
        let runtime = ReactorRuntime(FlowReactor(clock: clock))
        try runtime.send(.load(1))
        try runtime.send(.load(2))
        await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(1))
        try await runtime.settle()
        #expect(runtime.currentState.log.sorted() == ["loaded 1", "loaded 2"])
        runtime.stop()
    }

    @Test func aDebouncedActionSwitchesWhenItIsReleasedNotWhenItIsSent() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(
            clock: clock,
            actions: { flow, clock in
                flow.debounce(for: .seconds(5), clock: clock).flatMapLatest()
            })
        let runtime = ReactorRuntime(reactor)
        try runtime.send(.load(1))
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(5))
        try await eventually("load(1)'s delay to sleep") { clock.sleeperCount == 1 && runtime.inFlightEffectCount == 1 }
        // load(2) is held 5 s; load(1)'s delay (1 s) ends meanwhile, untouched.
        try runtime.send(.load(2))
        await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(1))
        try await eventually("load(1) to land") { runtime.currentState.log == ["loaded 1"] }
        await clock.advance(by: .seconds(4))
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await runtime.settle()
        #expect(runtime.currentState.log == ["loaded 1", "loaded 2"])
        runtime.stop()
    }
}

@Suite(.offThePool) struct StartWithTests {
    @Test func aFreshRuntimeRunsTheStartElementsFirstInRxOrder() throws {
        let reactor = FlowReactor(
            clock: TestClock(), actions: { flow, _ in flow.startWith(.type("b")).startWith(.type("a")) },
            mutations: { flow, _ in flow.startWith(.append("m")) })
        let runtime = ReactorRuntime(reactor)
        #expect(runtime.currentState.log == ["a", "b", "m"])
        #expect(runtime.currentVersion == 3)
        #expect(try runtime.send(.type("c")) == 3, "start actions are numbered like sent ones")
        runtime.stop()
    }

    @Test func operatorsAfterStartWithApplyToItAndThoseBeforeDoNot() throws {
        let reactor = FlowReactor(
            clock: TestClock(),
            actions: { flow, _ in
                flow.map { if case .type(let text) = $0 { .type("before:" + text) } else { $0 } }
                    .startWith(.type("start"))
                    .map { if case .type(let text) = $0 { .type(text + ":after") } else { $0 } }
            })
        let runtime = ReactorRuntime(reactor)
        try runtime.send(.type("sent"))
        #expect(runtime.currentState.log == ["start:after", "before:sent:after"])
        runtime.stop()
    }

    @Test func aRestoredRuntimeDoesNotStartAgain() throws {
        let reactor = FlowReactor(clock: TestClock(), actions: { flow, _ in flow.startWith(.type("hello")) })
        let first = ReactorRuntime(reactor)
        #expect(first.currentState.log == ["hello"])
        let restored = ReactorRuntime(reactor, restoring: first.checkpoint)
        #expect(restored.currentState.log == ["hello"])
        #expect(restored.currentVersion == 1)
        first.stop()
        restored.stop()
    }

    @Test func aDeferredStartWaitsSoMiddlewaresSeeTheStartActions() throws {
        final class Accepted: ReactorMiddleware, Sendable {
            typealias R = FlowReactor
            let log = EventLog()
            var interceptsActions: Bool { false }
            func didAccept(action: FlowReactor.Action, seq: UInt64, isStubbed: Bool) { log.append("\(seq) \(action)") }
        }
        let reactor = FlowReactor(clock: TestClock(), actions: { flow, _ in flow.startWith(.type("hello")) })
        let runtime = ReactorRuntime(reactor, start: false)
        #expect(runtime.hasStartElements)
        #expect(runtime.currentState.log == [])
        let accepted = Accepted()
        runtime.addMiddleware(accepted)
        runtime.start()
        runtime.start()
        #expect(!runtime.hasStartElements)
        #expect(accepted.log.all == [#"1 type("hello")"#])
        #expect(runtime.currentState.log == ["hello"])
        runtime.stop()
    }

    @Test func aStartActionsEffectEndsWithTheRuntime() async throws {
        let clock = TestClock()
        let reactor = FlowReactor(clock: clock, actions: { flow, _ in flow.startWith(.load(7)) })
        let runtime = ReactorRuntime(reactor)
        await clock.waitForSleepers()
        #expect(runtime.inFlightEffectCount == 1)
        runtime.stop()
        try await runtime.settle()
        #expect(clock.sleeperCount == 0)
        #expect(runtime.currentState.log == [])
    }
}

@Suite(.offThePool) struct FlowDebugTests {
    @Test func linesNameTheLabelAndSayStartedNextAndStopped() throws {
        let lines = Recorder<FlowDebugLine>()
        // ReactorKit's README: `action.debug("action")`.
        let reactor = FlowReactor(
            clock: TestClock(), actions: { flow, _ in flow.debug("action").filter { $0 != .type("skip") } },
            mutations: { flow, _ in flow.debug("mutation") })
        let runtime = ReactorRuntime(reactor, start: false)
        #expect(runtime.hasDebugStages)
        runtime.setDebugHandler(lines.record)
        runtime.start()
        try runtime.send(.type("a"))
        try runtime.send(.type("skip"))
        runtime.stop()
        #expect(
            lines.values.map(\.description) == [
                "action -> started", "mutation -> started",
                #"action -> next(type("a"))"#, #"mutation -> next(append("a"))"#,
                #"action -> next(type("skip"))"#,
                "action -> stopped", "mutation -> stopped",
            ])
    }

    @Test func theDefaultLabelIsWhereDebugWasCalled() throws {
        let lines = Recorder<FlowDebugLine>()
        let reactor = FlowReactor(clock: TestClock(), actions: { flow, _ in flow.debug() })
        let runtime = ReactorRuntime(reactor, start: false)
        runtime.setDebugHandler(lines.record)
        runtime.start()
        #expect(lines.values.first?.label.hasPrefix("ReactorsTests/FlowOperatorTests.swift:") == true)
        runtime.stop()
    }

    @Test func aPlainReactorHasNoDebugStages() {
        let runtime = ReactorRuntime(FlowReactor(clock: TestClock()))
        #expect(!runtime.hasDebugStages)
        runtime.stop()
    }
}
