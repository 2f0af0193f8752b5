import ReactorServerTesting
import Reactors
import Synchronization
import Testing

/// Records every hook call; rejects `.decrease` when the count is 0.
struct RecordingMiddleware: ReactorMiddleware {
    typealias R = CountingReactor
    let log: EventLog

    func intercept(action: CountingReactor.Action, state: CountingReactor.State) throws(ActionRejection) {
        if action == .decrease, state.value == 0 {
            throw ActionRejection(code: "below_zero", message: "the counter cannot go below zero")
        }
    }

    func didAccept(action: CountingReactor.Action, seq: UInt64, isStubbed: Bool) {
        log.append("accept \(seq) \(action)\(isStubbed ? " stubbed" : "")")
    }

    func didReduce(mutation: CountingReactor.Mutation, state: CountingReactor.State, version: UInt64) {
        log.append("reduce v\(version) \(state.value)")
    }

    func didForce(state: CountingReactor.State, version: UInt64) {
        log.append("force v\(version) \(state.value)")
    }

    func didFail(error: any Error) {
        log.append("fail")
    }
}

@Suite(.offThePool) struct MiddlewareTests {
    @Test func interceptRejectsWithoutTakingASeq() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(RecordingMiddleware(log: log))
        #expect(
            throws: ReactorError.rejected(
                ActionRejection(code: "below_zero", message: "the counter cannot go below zero"))
        ) {
            try runtime.send(.decrease)
        }
        #expect(try runtime.send(.increase) == 1)
        #expect(try runtime.send(.decrease) == 2)
        #expect(log.all == ["accept 1 increase", "reduce v1 1", "accept 2 decrease", "reduce v2 0"])
    }

    @Test func onlyMiddlewaresThatInterceptAreAskedToIntercept() throws {
        struct Observer: ReactorMiddleware {
            typealias R = CountingReactor
            let log: EventLog
            var interceptsActions: Bool { false }
            func intercept(action: CountingReactor.Action, state: CountingReactor.State) throws(ActionRejection) {
                log.append("observer intercept")
            }
            func didAccept(action: CountingReactor.Action, seq: UInt64, isStubbed: Bool) {
                log.append("observer accept \(seq)")
            }
        }
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(Observer(log: log))
        #expect(try runtime.send(.decrease) == 1, "nothing intercepts yet")
        #expect(try runtime.send(.increase) == 2)
        runtime.addMiddleware(RecordingMiddleware(log: log))
        #expect(throws: ReactorError.self) { try runtime.send(.decrease) }
        #expect(log.all == ["observer accept 1", "observer accept 2"])
    }

    @Test func hooksRunBeforeObserversSeeTheState() throws {
        let log = EventLog()
        let runtime = ReactorRuntime(CountingReactor())
        runtime.addMiddleware(RecordingMiddleware(log: log))
        let token = runtime.observe { event in
            if case .state(let snapshot, _) = event { log.append("observe v\(snapshot.version)") }
        }
        try runtime.send(.increaseTwice)
        runtime.isStubEnabled = true
        try runtime.send(.increase)
        try runtime.forceState(.init(value: 9))
        #expect(
            log.all == [
                "observe v0", "accept 1 increaseTwice", "reduce v1 1", "observe v1", "reduce v2 2", "observe v2",
                "accept 2 increase stubbed", "force v3 9", "observe v3",
            ])
        token.cancel()
    }

    @Test func effectFailuresReachMiddlewares() async throws {
        struct Failures: ReactorMiddleware {
            typealias R = ScriptReactor
            let log: EventLog
            func didFail(error: any Error) { log.append("\(error)") }
        }
        let log = EventLog()
        let runtime = ReactorRuntimeBox.make()
        runtime.addMiddleware(Failures(log: log))
        _ = try await runtime.sendAndWait(.effect { _ in .run { _ in throw TestFailure("down") } })
        #expect(log.all == ["down"])
    }
}
