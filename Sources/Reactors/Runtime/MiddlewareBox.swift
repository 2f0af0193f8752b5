/// A middleware as a runtime holds it: a class reference, subclassed once per middleware type.
///
/// Kept as `any ReactorMiddleware<R>` in an array, every hook call copied the existential out of the array
/// and destroyed it after (the compiler cannot borrow an element of an array it may not prove unchanged):
/// ~140 instructions per middleware per hook, five hooks per action with the journal's and the state limit's
/// middlewares (callgrind). Through a class reference a hook is one virtual call, and the box takes no
/// more memory than the existential's array slot did (its 40 bytes become 8 and the middleware's own size).
@usableFromInline
class AnyMiddleware<R: Reactor>: @unchecked Sendable {
    /// The middleware's `interceptsActions` and `vetsStates`, read once when it was added.
    @usableFromInline let interceptsActions: Bool
    @usableFromInline let vetsStates: Bool

    init(interceptsActions: Bool, vetsStates: Bool) {
        self.interceptsActions = interceptsActions
        self.vetsStates = vetsStates
    }

    /// ``ReactorMiddleware/intercept(action:state:)`` of the boxed middleware.
    @usableFromInline func intercept(action: R.Action, state: R.State) throws(ActionRejection) {}
    /// ``ReactorMiddleware/didAccept(action:seq:isStubbed:)`` of the boxed middleware.
    @usableFromInline func didAccept(action: R.Action, seq: UInt64, isStubbed: Bool) {}
    /// ``ReactorMiddleware/vet(state:version:)`` of the boxed middleware.
    @usableFromInline func vet(state: R.State, version: UInt64) throws(ActionRejection) {}
    /// ``ReactorMiddleware/didRefuse(_:seq:)`` of the boxed middleware.
    @usableFromInline func didRefuse(_ rejection: ActionRejection, seq: UInt64?) {}
    /// ``ReactorMiddleware/didReduce(mutation:state:version:)`` of the boxed middleware.
    @usableFromInline func didReduce(mutation: R.Mutation, state: R.State, version: UInt64) {}
    /// ``ReactorMiddleware/didForce(state:version:)`` of the boxed middleware.
    @usableFromInline func didForce(state: R.State, version: UInt64) {}
    /// ``ReactorMiddleware/didFail(error:)`` of the boxed middleware.
    @usableFromInline func didFail(error: any Error) {}
}

/// One middleware of type `M` in its box.
final class MiddlewareBox<M: ReactorMiddleware>: AnyMiddleware<M.R>, @unchecked Sendable {
    let base: M

    init(_ base: M) {
        self.base = base
        super.init(interceptsActions: base.interceptsActions, vetsStates: base.vetsStates)
    }

    override func intercept(action: M.R.Action, state: M.R.State) throws(ActionRejection) {
        try base.intercept(action: action, state: state)
    }

    override func didAccept(action: M.R.Action, seq: UInt64, isStubbed: Bool) {
        base.didAccept(action: action, seq: seq, isStubbed: isStubbed)
    }

    override func vet(state: M.R.State, version: UInt64) throws(ActionRejection) {
        try base.vet(state: state, version: version)
    }

    override func didRefuse(_ rejection: ActionRejection, seq: UInt64?) { base.didRefuse(rejection, seq: seq) }

    override func didReduce(mutation: M.R.Mutation, state: M.R.State, version: UInt64) {
        base.didReduce(mutation: mutation, state: state, version: version)
    }

    override func didForce(state: M.R.State, version: UInt64) { base.didForce(state: state, version: version) }

    override func didFail(error: any Error) { base.didFail(error: error) }
}
