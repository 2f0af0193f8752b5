import Reactors

/// A reactor's own middleware (`ReactorCatalog.register(…, middlewares:)`) on the runtime of a hosted
/// session, whose reactor is the instrumented wrapper of the author's: the same actions, mutations and
/// states, so every hook passes straight through, pinned on the session as `.middleware` (its code is the
/// author's: a trap in it quarantines the session like one in `reduce`).
///
/// A session adds them, in the order registered, right after its journal: `intercept` runs before the
/// action is accepted (a rejection is answered 422 with the rejection's code), `vet` before a state is
/// journaled, and `didReduce` / `didForce` once it has been.
@usableFromInline
struct HostedMiddleware<Base: Reactor>: ReactorMiddleware {
    @usableFromInline typealias R = InstrumentedReactor<Base>

    @usableFromInline let base: any ReactorMiddleware<Base>
    /// The session's crash attribution.
    @usableFromInline let tracer: SessionCallTracer

    @usableFromInline init(base: any ReactorMiddleware<Base>, tracer: SessionCallTracer) {
        self.base = base
        self.tracer = tracer
    }

    @usableFromInline func intercept(action: Base.Action, state: Base.State) throws(ActionRejection) {
        // Before the action has a seq: the record keeps the JSON being sent instead.
        try tracer.runBeforeAdmission(.middleware) { () throws(ActionRejection) in
            try base.intercept(action: action, state: state)
        }
    }

    @usableFromInline func didAccept(action: Base.Action, seq: UInt64, isStubbed: Bool) {
        tracer.run(.middleware, seq: seq) { base.didAccept(action: action, seq: seq, isStubbed: isStubbed) }
    }

    @usableFromInline func vet(state: Base.State, version: UInt64) throws(ActionRejection) {
        try tracer.run(.middleware, version: version) { () throws(ActionRejection) in
            try base.vet(state: state, version: version)
        }
    }

    @usableFromInline func didRefuse(_ rejection: ActionRejection, seq: UInt64?) {
        tracer.run(.middleware, seq: seq ?? 0) { base.didRefuse(rejection, seq: seq) }
    }

    @usableFromInline func didReduce(mutation: Base.Mutation, state: Base.State, version: UInt64) {
        tracer.run(.middleware, version: version) { base.didReduce(mutation: mutation, state: state, version: version) }
    }

    @usableFromInline func didForce(state: Base.State, version: UInt64) {
        tracer.run(.middleware, version: version) { base.didForce(state: state, version: version) }
    }

    @usableFromInline func didFail(error: any Error) { tracer.run(.middleware) { base.didFail(error: error) } }

    @usableFromInline var interceptsActions: Bool { base.interceptsActions }

    @usableFromInline var vetsStates: Bool { base.vetsStates }
}
