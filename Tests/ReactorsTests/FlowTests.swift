import ReactorServerTesting
import Reactors
import Synchronization
import Testing

@Suite(.offThePool) struct FlowTests {
    /// Follows a shared "current user" the way ReactorKit's README merges a global state.
    struct ProfileReactor: Reactor {
        enum Action: Codable, Sendable { case rename(String), ignored }
        enum Mutation: Codable, Sendable { case setName(String), setUser(String) }
        struct State: Codable, Sendable, Equatable {
            var name = ""
            var user = ""
        }

        let initialState = State()
        let currentUser: SharedValue<String>

        func mutate(action: Action) -> Effect<Mutation> {
            switch action {
            case .rename(let name): .just(.setName(name))
            case .ignored: .just(.setName("must not happen"))
            }
        }

        func reduce(state: State, mutation: Mutation) -> State {
            var state = state
            switch mutation {
            case .setName(let name): state.name = name
            case .setUser(let user): state.user = user
            }
            return state
        }

        func transform(action: Flow<Action>) -> Flow<Action> {
            action.filter { if case .ignored = $0 { false } else { true } }
        }

        func transform(mutation: Flow<Mutation>) -> Flow<Mutation> {
            mutation
                .map { if case .setName(let name) = $0 { .setName(name.uppercased()) } else { $0 } }
                .merge(with: currentUser.values.map { Mutation.setUser($0) })
        }
    }

    @Test func sharedValueReachesEveryReactorMergingIt() async throws {
        let currentUser = SharedValue("ada")
        let runtimes = (0..<3).map { _ in ReactorRuntime(ProfileReactor(currentUser: currentUser)) }
        let recorders = runtimes.map { _ in StateRecorder<ProfileReactor.State>() }
        let tokens = zip(runtimes, recorders).map { runtime, recorder in runtime.observe(recorder.record) }
        // The merged source may deliver "ada" before or after the observer joins: wait for the state, not
        // for a count of states.
        for recorder in recorders {
            try await recorder.waitUntil("the shared user ada to be reduced") { $0.last?.snapshot?.state.user == "ada" }
        }
        for runtime in runtimes { #expect(runtime.currentState.user == "ada") }
        currentUser.value = "grace"
        for recorder in recorders {
            try await recorder.waitUntil("the shared user grace to be reduced") {
                $0.last?.snapshot?.state.user == "grace"
            }
        }
        for runtime in runtimes { #expect(runtime.currentState.user == "grace") }
        for runtime in runtimes { runtime.stop() }
        _ = tokens
    }

    @Test func actionAndMutationTransformsApplyToOwnElements() throws {
        let runtime = ReactorRuntime(ProfileReactor(currentUser: SharedValue("")))
        try runtime.send(.rename("bob"))
        #expect(runtime.currentState.name == "BOB", "the mutation transform ran")
        // The action filter drops it before mutate (which would set the name); sent last, so a filter
        // that lets it through shows in the final state.
        try runtime.send(.ignored)
        #expect(runtime.currentState.name == "BOB", "the action filter let .ignored through")
        runtime.stop()
    }

    /// Merges a source that fails after one element.
    struct FailingSourceReactor: Reactor {
        enum Action: Codable, Sendable { case increase }
        struct State: Codable, Sendable { var value = 0 }
        let initialState = State()
        let source: AsyncThrowingStream<Action, any Error>

        func reduce(state: State, mutation: Action) -> State { State(value: state.value + 1) }

        func transform(mutation: Flow<Action>) -> Flow<Action> { mutation.merge(with: source) }
    }

    @Test func aFailingMergedSourceNeverEndsTheReactor() async throws {
        let (source, continuation) = AsyncThrowingStream<FailingSourceReactor.Action, any Error>.makeStream()
        let runtime = ReactorRuntime(FailingSourceReactor(source: source))
        let failed = Gate()
        runtime.setErrorHandler { _ in failed.open() }
        let recorder = StateRecorder<FailingSourceReactor.State>()
        let token = runtime.observe(recorder.record)
        continuation.yield(.increase)
        continuation.finish(throwing: TestFailure("source down"))
        try await failed.wait()
        try await recorder.waitForCount(2)
        try runtime.send(.increase)
        #expect(runtime.currentState.value == 2)
        #expect(!runtime.isStopped)
        token.cancel()
        runtime.stop()
    }
}

@Suite(.offThePool) struct MergedActionTests {
    /// Merges a stream of actions (e.g. ticks from elsewhere) into its own.
    struct TickReactor: Reactor {
        enum Action: Codable, Sendable, Equatable { case tick, local }
        struct State: Codable, Sendable { var ticks = 0 }
        let initialState = State()
        let ticks: AsyncStream<Action>

        func reduce(state: State, mutation: Action) -> State { State(ticks: state.ticks + 1) }

        func transform(action: Flow<Action>) -> Flow<Action> { action.merge(with: ticks) }
    }

    final class SeqLog: ReactorMiddleware, Sendable {
        typealias R = TickReactor
        let log = EventLog()
        func didAccept(action: TickReactor.Action, seq: UInt64, isStubbed: Bool) { log.append("\(seq) \(action)") }
    }

    @Test func mergedActionsTakeSeqsAndRunLikeSentOnes() async throws {
        let (ticks, continuation) = AsyncStream<TickReactor.Action>.makeStream()
        let runtime = ReactorRuntime(TickReactor(ticks: ticks))
        let seqs = SeqLog()
        runtime.addMiddleware(seqs)
        let recorder = StateRecorder<TickReactor.State>()
        let token = runtime.observe(recorder.record)
        continuation.yield(.tick)
        continuation.yield(.tick)
        try await recorder.waitForCount(3)
        #expect(try runtime.send(.local) == 3)
        // send() numbers the action at once; it runs where the runtime drains, which may be the
        // merged source's thread still finishing the ticks: its state says when it ran.
        try await recorder.waitForCount(4)
        #expect(seqs.log.all == ["1 tick", "2 tick", "3 local"])
        #expect(runtime.currentState.ticks == 3)
        token.cancel()
        runtime.stop()
    }
}

@Suite(.offThePool) struct SharedValueTests {
    @Test func valuesYieldTheCurrentValueThenEveryUpdate() async throws {
        try await waitFor("the shared value's updates") {
            let shared = SharedValue(1)
            var iterator = shared.values.makeAsyncIterator()
            #expect(await iterator.next() == 1)
            shared.value = 2
            #expect(await iterator.next() == 2)
            shared.update { $0 += 40 }
            #expect(await iterator.next() == 42)
            #expect(shared.value == 42)
        }
    }

    @Test func aFinishedListenerIsForgotten() async throws {
        let shared = SharedValue("a")
        let listener = Task {
            for await value in shared.values where value == "stop" { return }
        }
        shared.value = "stop"
        try await waitFor("the listener to see \"stop\"") { await listener.value }
        shared.value = "after"
        #expect(shared.subscriberCount == 0)
    }
}

@Suite(.offThePool) struct WaitForEffectsTests {
    @Test func waitingEndsWhenTheWaitingTaskIsCancelled() async throws {
        let runtime = ReactorRuntimeBox.make()
        let gate = Gate()
        try runtime.send(.effect { _ in .run { _ in try await gate.wait() } })
        let waiter = Task { await runtime.waitForEffects() }
        waiter.cancel()
        try await waitFor("the waiting task to end once cancelled") { await waiter.value }
        #expect(runtime.inFlightEffectCount == 1)
        gate.open()
        try await runtime.settle()
        #expect(runtime.inFlightEffectCount == 0)
    }

    @Test func anEffectCancellableInsideAnAsyncEffectCanBeCancelled() async throws {
        let runtime = ReactorRuntimeBox.make()
        let started = Gate()
        let release = Gate()
        try runtime.send(
            .effect { _ in
                .concat([
                    .run { emit in await emit(.append(1)) },
                    Effect.run { emit in
                        started.open()
                        try await release.wait()
                        await emit(.append(2))
                    }.cancellable(id: "inner"),
                    .just(.append(3)),
                ])
            })
        try await started.wait()
        try runtime.send(.effect { _ in .cancel(id: "inner") })
        release.open()
        try await runtime.settle()
        // Only the cancellable part ends (as Rx's takeUntil completes it); the concat goes on.
        #expect(runtime.currentState.values == [1, 3])
    }
}
