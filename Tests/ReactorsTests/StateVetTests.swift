import Foundation
import ReactorServerTesting
import Reactors
import Synchronization
import Testing

/// Refuses every state whose value is above `maximum`, and records what it refused and what was reduced.
struct CeilingMiddleware: ReactorMiddleware {
    typealias R = CountingReactor
    let maximum: Int
    let log: EventLog

    var interceptsActions: Bool { false }
    var vetsStates: Bool { true }

    func vet(state: CountingReactor.State, version: UInt64) throws(ActionRejection) {
        if state.value > maximum { throw ActionRejection(code: "too_high", message: "\(state.value) as v\(version)") }
    }

    func didRefuse(_ rejection: ActionRejection, seq: UInt64?) {
        log.append("refuse \(seq.map(String.init) ?? "-") \(rejection.message)")
    }

    func didReduce(mutation: CountingReactor.Mutation, state: CountingReactor.State, version: UInt64) {
        log.append("reduce v\(version) \(state.value)")
    }

    func didForce(state: CountingReactor.State, version: UInt64) {
        log.append("force v\(version) \(state.value)")
    }
}

/// Refuses a `ScriptReactor` state holding 99.
struct NoNinetyNine: ReactorMiddleware {
    typealias R = ScriptReactor
    let log: EventLog
    var vetsStates: Bool { true }
    var interceptsActions: Bool { false }

    func vet(state: ScriptReactor.State, version: UInt64) throws(ActionRejection) {
        if state.values.contains(99) { throw ActionRejection(code: "no_99", message: "99 is not allowed") }
    }

    func didRefuse(_ rejection: ActionRejection, seq: UInt64?) { log.append("refuse \(seq.map(String.init) ?? "-")") }
}

/// A middleware's `vet` refuses a state before it is committed: no version, no `didReduce`, observers see
/// nothing, and the completion of the action that produced it fails.
@Suite(.offThePool) struct StateVetTests {
    static func result(_ send: (@escaping ReactorRuntime<CountingReactor>.Completion) throws -> Void) throws -> Result<
        Snapshot<CountingReactor.State>, ReactorError
    >? {
        let outcome = Mutex<Result<Snapshot<CountingReactor.State>, ReactorError>?>(nil)
        try send { result in outcome.withLock { $0 = result } }
        return outcome.withLock { $0 }
    }

    /// The code of a `.stateRefused` failure, nil for anything else.
    static func refusal(_ result: Result<Snapshot<CountingReactor.State>, ReactorError>?) -> String? {
        guard case .failure(.stateRefused(let rejection))? = result else { return nil }
        return rejection.code
    }

    @Test func aRefusedStateChangesNothingAndFailsItsAction() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(CeilingMiddleware(maximum: 1, log: log))
        let recorder = StateRecorder<CountingReactor.State>()
        let token = runtime.observe(recorder.record)
        #expect(try Self.result { try runtime.send(.increase, completion: $0) }.map { try $0.get().version } == 1)
        let refused = try Self.result { try runtime.send(.increase, completion: $0) }
        #expect(Self.refusal(refused) == "too_high")
        #expect(runtime.currentSnapshot == Snapshot(version: 1, state: .init(value: 1)))
        #expect(runtime.checkpoint == Checkpoint(state: .init(value: 1), version: 1, lastSeq: 2))
        // The next state that fits is the next version: the refused one left no gap.
        try runtime.send(.decrease)
        #expect(runtime.currentSnapshot == Snapshot(version: 2, state: .init(value: 0)))
        #expect(recorder.snapshots.map(\.version) == [0, 1, 2])
        #expect(log.all == ["reduce v1 1", "refuse 2 2 as v2", "reduce v2 0"])
        token.cancel()
    }

    @Test func theActionsOtherMutationsStillApply() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(CeilingMiddleware(maximum: 1, log: log))
        let result = try Self.result { try runtime.send(.increaseTwice, completion: $0) }
        #expect(Self.refusal(result) == "too_high")
        #expect(runtime.currentSnapshot == Snapshot(version: 1, state: .init(value: 1)))
        #expect(log.all == ["reduce v1 1", "refuse 1 2 as v2"])
    }

    @Test func aRefusalInAnAsyncEffectFailsTheActionAndTheEffectGoesOn() async throws {
        let log = EventLog()
        let runtime = ReactorRuntimeBox.make()
        runtime.addMiddleware(NoNinetyNine(log: log))
        await #expect(throws: ReactorError.stateRefused(ActionRejection(code: "no_99", message: "99 is not allowed"))) {
            try await runtime.sendAndWait(
                .effect { _ in
                    .run { emit in
                        await emit(.append(1))
                        await emit(.append(99))
                        await emit(.append(2))
                    }
                })
        }
        #expect(runtime.currentSnapshot == Snapshot(version: 2, state: .init(values: [1, 2])))
        #expect(log.all == ["refuse 1"])
    }

    @Test func aRefusedForcedStateChangesNothing() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(CeilingMiddleware(maximum: 5, log: log))
        runtime.isStubEnabled = true
        let refused = try Self.result { try runtime.forceState(.init(value: 6), completion: $0) }
        #expect(Self.refusal(refused) == "too_high")
        #expect(runtime.currentVersion == 0)
        #expect(
            try Self.result { try runtime.forceState(.init(value: 5), completion: $0) }.map { try $0.get() }
                == Snapshot(version: 1, state: .init(value: 5)))
        #expect(log.all == ["refuse - 6 as v1", "force v1 5"])
    }
}

/// Stub mode applies to an action as the runtime admits it: a toggle while the action waits in the queue
/// does not change what happens to it, and the receipt says what will.
@Suite(.offThePool) struct StubAdmissionTests {
    @Test func anActionQueuedBeforeStubModeStillRunsAndOneAfterIsStubbed() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(RecordingMiddleware(log: log))
        // An observer holds the drain at version 1 on another thread, so later actions wait in the queue.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let token = runtime.observe { event in
            guard case .state(let snapshot, _) = event, snapshot.version == 1 else { return }
            holding.signal()
            _ = release.wait(timeout: .now() + 10)
        }
        Thread.detachNewThread {
            _ = try? runtime.send(.increase)
            done.signal()
        }
        #expect(holding.wait(timeout: .now() + 10) == .success, "the drain never reached version 1")
        let queued = try runtime.submit(.increase)
        runtime.isStubEnabled = true
        let stubbed = try runtime.submit(.increase)
        release.signal()
        #expect(done.wait(timeout: .now() + 10) == .success, "the drain never finished")
        #expect(queued == ActionReceipt(seq: 2, isStubbed: false))
        #expect(stubbed == ActionReceipt(seq: 3, isStubbed: true))
        #expect(runtime.currentSnapshot == Snapshot(version: 2, state: .init(value: 2)))
        #expect(
            log.all == [
                "accept 1 increase", "reduce v1 1", "accept 2 increase", "reduce v2 2", "accept 3 increase stubbed",
            ])
        token.cancel()
    }
}
