import ReactorServerTesting
import Reactors
import Synchronization
import Testing

@Suite(.offThePool) struct OrderingTests {
    @Test func actionsSentFromAnObserverAreQueuedFIFONotReducedRecursively() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let log = EventLog()
        let token = runtime.observe { [weak runtime] event in
            guard case .state(let snapshot, _) = event else { return }
            log.append("begin v\(snapshot.version)")
            if snapshot.version == 1 {
                // Both are queued behind the current dispatch, in the order sent.
                _ = try? runtime?.send(.increase)
                _ = try? runtime?.send(.decrease)
            }
            log.append("end v\(snapshot.version)")
        }
        try runtime.send(.increase)
        #expect(log.all == ["begin v0", "end v0", "begin v1", "end v1", "begin v2", "end v2", "begin v3", "end v3"])
        #expect(runtime.currentSnapshot == Snapshot(version: 3, state: .init(value: 1)))
        token.cancel()
    }

    @Test func anActionSentWhileMutateRunsIsQueuedBehindTheCurrentActionsMutations() async throws {
        let runtime = ReactorRuntimeBox.make()
        // `mutate` runs inside the dispatch: a send from there must wait its turn, not run first.
        let snapshot = try await runtime.sendAndWait(
            .effect { box in
                _ = try? box.runtime.send(.set(3))
                return .concat([.just(.append(1)), .just(.append(2))])
            })
        #expect(snapshot.state.values == [1, 2], "the action completes with its own mutations")
        #expect(runtime.currentState.values == [1, 2, 3], "the queued action runs after them, not before")
        #expect(runtime.currentVersion == 3)
    }

    @Test func anActionSentFromARunningEffectIsReducedBetweenItsEmissions() async throws {
        let runtime = ReactorRuntimeBox.make()
        // Each emit returns once reduced, so what the effect sends in between lands in between.
        let snapshot = try await runtime.sendAndWait(
            .effect { box in
                .run { emit in
                    await emit(.append(1))
                    try box.runtime.send(.set(3))
                    await emit(.append(2))
                }
            })
        try await runtime.settle()
        #expect(snapshot.state.values.prefix(1) == [1])
        #expect(runtime.currentState.values == [1, 3, 2])
        #expect(runtime.currentVersion == 3)
    }

    @Test func concurrentSendersReachExactCountWithGaplessVersions() async throws {
        let runtime = ReactorRuntime(CountingReactor())
        let recorder = StateRecorder<CountingReactor.State>()
        let token = runtime.observe(recorder.record)
        // Observer calls for one runtime must never overlap, even when a drain is handed to a task.
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let guardToken = runtime.observe { _ in
            if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }
        let seqs = await withTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var seqs: [UInt64] = []
                    seqs.reserveCapacity(10_000)
                    for _ in 0..<10_000 { seqs.append((try? runtime.send(.increase)) ?? 0) }
                    return seqs
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        // A drain that ran over its budget may still be finishing in a task.
        try await recorder.waitForCount(80_001)
        #expect(runtime.currentSnapshot == Snapshot(version: 80_000, state: .init(value: 80_000)))
        let snapshots = recorder.snapshots
        #expect(snapshots.count == 80_001)
        #expect(snapshots.indices.allSatisfy { snapshots[$0].version == UInt64($0) && snapshots[$0].state.value == $0 })
        #expect(seqs.sorted() == Array(1...80_000))
        #expect(overlaps.load(ordering: .relaxed) == 0)
        token.cancel()
        guardToken.cancel()
    }

    @Test func stopCancelsEffectsFinishesObserversAndRefusesActions() async throws {
        let runtime = ReactorRuntimeBox.make()
        let recorder = StateRecorder<ScriptReactor.State>()
        let token = runtime.observe(recorder.record)
        let started = Gate()
        let cancelled = Gate()
        try runtime.send(
            .effect { _ in
                .run { _ in
                    started.open()
                    try await withTaskCancellationHandler {
                        try await cancelled.wait()
                    } onCancel: {
                        cancelled.open()
                    }
                }
            })
        try await started.wait()
        runtime.stop()
        try await runtime.settle()
        #expect(runtime.isStopped)
        #expect(recorder.isFinished)
        #expect(throws: ReactorError.stopped) { try runtime.send(.set(1)) }
        let late = StateRecorder<ScriptReactor.State>()
        let lateToken = runtime.observe(late.record)
        #expect(late.isFinished)
        token.cancel()
        lateToken.cancel()
    }

    @Test func transformStateShapesWhatObserversSeeButIsNotFedBack() throws {
        // ReactorKit issue #68: a derived field is recomputed each time, never accumulated.
        struct Derived: Reactor {
            enum Action: Codable, Sendable { case increase }
            struct State: Codable, Sendable, Equatable {
                var value = 0
                var label = ""
            }
            let initialState = State()
            func reduce(state: State, mutation: Action) -> State {
                State(value: state.value + 1, label: state.label)
            }
            func transform(state: State) -> State {
                var state = state
                state.label += "[\(state.value)]"
                return state
            }
        }
        let runtime = ReactorRuntime(Derived())
        #expect(runtime.currentState.label == "[0]")
        try runtime.send(.increase)
        try runtime.send(.increase)
        #expect(runtime.currentState == .init(value: 2, label: "[2]"))
        #expect(runtime.checkpoint.state == .init(value: 2, label: ""))
    }

    @Test func restoringACheckpointContinuesVersionAndSeq() throws {
        let first = ReactorRuntime(CountingReactor())
        try first.send(.increase)
        try first.send(.increaseTwice)
        let checkpoint = first.checkpoint
        let second = ReactorRuntime(CountingReactor(), restoring: checkpoint)
        #expect(second.currentSnapshot == Snapshot(version: 3, state: .init(value: 3)))
        #expect(try second.send(.decrease) == 3)
        #expect(second.currentSnapshot == Snapshot(version: 4, state: .init(value: 2)))
    }
}

@Suite(.offThePool) struct ReentrancyTests {
    @Test func stopFromAnObserverFinishesAfterTheCurrentDispatch() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let recorder = StateRecorder<CountingReactor.State>()
        let stopper = runtime.observe { [weak runtime] event in
            if case .state(let snapshot, _) = event, snapshot.version == 1 { runtime?.stop() }
        }
        let token = runtime.observe(recorder.record)
        try runtime.send(.increaseTwice)
        #expect(recorder.snapshots.map(\.version) == [0, 1, 2])
        #expect(recorder.isFinished)
        #expect(runtime.isStopped)
        stopper.cancel()
        token.cancel()
    }

    @Test func aMiddlewareHookMaySendWithoutRecursion() throws {
        struct Echo: ReactorMiddleware {
            typealias R = CountingReactor
            let runtime: Box
            let log: EventLog
            func didReduce(mutation: CountingReactor.Mutation, state: CountingReactor.State, version: UInt64) {
                log.append("reduce v\(version)")
                if version == 1 { _ = try? runtime.value?.send(.decrease) }
                log.append("after v\(version)")
            }
        }
        final class Box: Sendable {
            let storage = Mutex<ReactorRuntime<CountingReactor>?>(nil)
            var value: ReactorRuntime<CountingReactor>? { storage.withLock { $0 } }
        }
        let box = Box()
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        box.storage.withLock { $0 = runtime }
        runtime.addMiddleware(Echo(runtime: box, log: log))
        try runtime.send(.increase)
        #expect(log.all == ["reduce v1", "after v1", "reduce v2", "after v2"])
        #expect(runtime.currentSnapshot == Snapshot(version: 2, state: .init(value: 0)))
        box.storage.withLock { $0 = nil }
    }
}
