import Reactors
import Synchronization
import Testing

@Suite struct ReactorRuntimeTests {
    @Test func eachHookRunsOnceAndInOrder() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor(log: log))
        #expect(log.all == ["transformState", "transformAction", "transformMutation"])
        log.removeAll()
        try runtime.send(.increase)
        #expect(log.all == ["mutate", "reduce", "transformState"])
        #expect(runtime.currentState.value == 1)
        #expect(runtime.currentVersion == 1)
    }

    @Test func sendReturnsSeqAndReducesInline() throws {
        let runtime = ReactorRuntime(CountingReactor())
        #expect(try runtime.send(.increase) == 1)
        #expect(try runtime.send(.increaseTwice) == 2)
        #expect(runtime.currentSnapshot == Snapshot(version: 3, state: .init(value: 3)))
        #expect(runtime.checkpoint == Checkpoint(state: .init(value: 3), version: 3, lastSeq: 2))
    }

    @Test func observerGetsLatestThenEveryState() throws {
        let runtime = ReactorRuntime(CountingReactor())
        try runtime.send(.increase)
        try runtime.send(.increase)
        let recorder = Recorder<CountingReactor.State>()
        let token = runtime.observe(recorder.record)
        try runtime.send(.decrease)
        #expect(recorder.snapshots.map(\.version) == [2, 3])
        #expect(recorder.snapshots.map(\.state.value) == [2, 1])
        token.cancel()
        try runtime.send(.decrease)
        #expect(recorder.snapshots.count == 2)
    }
}
