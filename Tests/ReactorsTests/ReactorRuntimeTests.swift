import ReactorServerTesting
import Reactors
import Synchronization
import Testing

@Suite(.offThePool) struct ReactorRuntimeTests {
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
        let recorder = StateRecorder<CountingReactor.State>()
        let token = runtime.observe(recorder.record)
        try runtime.send(.decrease)
        #expect(recorder.snapshots.map(\.version) == [2, 3])
        #expect(recorder.snapshots.map(\.state.value) == [2, 1])
        token.cancel()
        try runtime.send(.decrease)
        #expect(recorder.snapshots.count == 2)
    }
}

@Suite(.offThePool) struct ObserverTests {
    @Test func currentStateIsUpdatedBeforeAnyObserverSeesTheState() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let mismatches = EventLog()
        let token = runtime.observe { [weak runtime] event in
            guard case .state(let snapshot, _) = event, let runtime else { return }
            if runtime.currentSnapshot != snapshot { mismatches.append("v\(snapshot.version)") }
        }
        try runtime.send(.increaseTwice)
        try runtime.send(.decrease)
        #expect(mismatches.all.isEmpty)
        token.cancel()
    }

    @Test func everyObserverSeesEveryStateInOrder() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let recorders = (0..<3).map { _ in StateRecorder<CountingReactor.State>() }
        let tokens = recorders.map { runtime.observe($0.record) }
        try runtime.send(.increase)
        try runtime.send(.increaseTwice)
        for recorder in recorders { #expect(recorder.snapshots.map(\.version) == [0, 1, 2, 3]) }
        for token in tokens { token.cancel() }
    }

    @Test func anObserverAddedDuringADispatchStartsFromTheNextLatestState() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let late = StateRecorder<CountingReactor.State>()
        let lateToken = LockedToken()
        let token = runtime.observe { [weak runtime] event in
            guard case .state(let snapshot, _) = event, snapshot.version == 1, let runtime else { return }
            lateToken.set(runtime.observe(late.record))
            // Not delivered yet: subscribing is queued behind this dispatch.
            if !late.values.isEmpty { lateToken.note("delivered during another observer's call") }
        }
        try runtime.send(.increase)
        try runtime.send(.increase)
        #expect(late.snapshots.map(\.version) == [1, 2])
        #expect(lateToken.notes.isEmpty)
        token.cancel()
    }

    @Test func droppingTheTokenEndsTheObservation() throws {
        let runtime = ReactorRuntime(CountingReactor())
        let recorder = StateRecorder<CountingReactor.State>()
        do {
            _ = runtime.observe(recorder.record)
        }
        try runtime.send(.increase)
        #expect(recorder.snapshots.map(\.version) == [0])
    }

    @Test func aDroppedObserverIsReleasedAtTheNextDispatch() throws {
        final class Witness: Sendable {}
        let runtime = ReactorRuntime(CountingReactor())
        weak var released: Witness?
        var token: ObservationToken?
        do {
            let witness = Witness()
            released = witness
            token = runtime.observe { _ in withExtendedLifetime(witness) {} }
        }
        let keep = runtime.observe { _ in }
        #expect(released != nil && token != nil)
        token = nil
        #expect(released != nil)
        try runtime.send(.increase)
        #expect(released == nil)
        keep.cancel()
    }

    @Test func theReactorRunsWithoutObservers() async throws {
        let runtime = ReactorRuntimeBox.make()
        try runtime.send(.effect { _ in .run { emit in await emit(.append(1)) } })
        try await runtime.settle()
        #expect(runtime.currentSnapshot == Snapshot(version: 1, state: .init(values: [1])))
    }
}

/// Holds a token created inside an observer, and notes anything odd seen there.
final class LockedToken: Sendable {
    private let token = Mutex<ObservationToken?>(nil)
    private let log = EventLog()
    func set(_ token: ObservationToken) { self.token.withLock { $0 = token } }
    func note(_ text: String) { log.append(text) }
    var notes: [String] { log.all }
}
