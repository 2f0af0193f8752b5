import ReactorServerTesting
import Reactors
import Synchronization
import Testing

@Suite(.offThePool) struct StubTests {
    @Test func stubRecordsActionsAndRunsNeitherMutateNorReduce() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor(log: log))
        try runtime.send(.increase)
        runtime.isStubEnabled = true
        log.removeAll()
        #expect(try runtime.send(.increase) == 2)
        #expect(try runtime.send(.decrease) == 3)
        #expect(log.all.isEmpty)
        #expect(runtime.stubbedActions == [.increase, .decrease])
        // Enabling keeps the current state (ReactorKit resets to the initial one).
        #expect(runtime.currentSnapshot == Snapshot(version: 1, state: .init(value: 1)))
    }

    @Test func forcedStateIsEmittedAsANewVersionEvenIfEqual() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let recorder = StateRecorder<CountingReactor.State>()
        let token = runtime.observe(recorder.record)
        runtime.isStubEnabled = true
        let completed = Mutex<Snapshot<CountingReactor.State>?>(nil)
        try runtime.forceState(.init(value: 0)) { result in completed.withLock { $0 = try? result.get() } }
        try runtime.forceState(.init(value: 42))
        #expect(recorder.snapshots.map(\.version) == [0, 1, 2])
        #expect(recorder.snapshots.map(\.state.value) == [0, 0, 42])
        #expect(completed.withLock { $0 } == Snapshot(version: 1, state: .init(value: 0)))
        #expect(runtime.checkpoint.state.value == 42)
        runtime.isStubEnabled = false
        try runtime.send(.increase)
        #expect(runtime.currentSnapshot == Snapshot(version: 3, state: .init(value: 43)))
        token.cancel()
    }

    @Test func forceStateNeedsStubMode() {
        let runtime = ReactorRuntime(CountingReactor())
        #expect(throws: ReactorError.stubDisabled) { try runtime.forceState(.init(value: 1)) }
        #expect(runtime.currentVersion == 0)
    }

    @Test(arguments: [0, 1, 3])
    func stubRecordIsBounded(limit: Int) throws {
        let runtime = ReactorRuntime(CountingReactor())
        runtime.stubRecordLimit = limit
        runtime.isStubEnabled = true
        let actions: [CountingReactor.Action] = [.increase, .decrease, .increaseTwice, .decrease, .increase]
        for action in actions { try runtime.send(action) }
        #expect(runtime.stubbedActions == Array(actions.suffix(limit)))
    }

    @Test func stubbedSendCompletesAtOnceWithTheCurrentSnapshot() throws {
        let runtime = ReactorRuntime(CountingReactor())
        runtime.isStubEnabled = true
        let result = Mutex<Result<Snapshot<CountingReactor.State>, ReactorError>?>(nil)
        try runtime.send(.increase) { outcome in result.withLock { $0 = outcome } }
        #expect(try result.withLock { $0 }?.get() == Snapshot(version: 0, state: .init(value: 0)))
    }

    @Test func enablingStubCancelsInFlightEffects() async throws {
        let runtime = ReactorRuntimeBox.make()
        let started = Gate()
        let release = Gate()
        try runtime.send(
            .effect { _ in
                .run { emit in
                    started.open()
                    try await release.wait()
                    await emit(.append(1))
                }
            })
        try await started.wait()
        runtime.isStubEnabled = true
        release.open()
        try await runtime.settle()
        #expect(runtime.currentState.values == [])
        #expect(runtime.currentVersion == 0)
    }
}
