/// Hooks around a runtime's pipeline, called in the order they were added; every method defaults to a no-op.
///
/// The service builds its action log (`didAccept`), journal (`didReduce`, `didForce`), state-size limit
/// (`vet`, `didRefuse`) and metrics on these. `intercept` runs on the sending thread; every other hook runs
/// on the thread that drains the runtime, serially and in order, and must not block.
public protocol ReactorMiddleware<R>: Sendable {
    /// The reactor type this middleware understands.
    associatedtype R: Reactor
    /// Called by `send` with the current state before the action is queued; throwing refuses the action.
    func intercept(action: R.Action, state: R.State) throws(ActionRejection)
    /// Called once per accepted action, in seq order, as it is taken from the queue (`isStubbed`: it will not run).
    func didAccept(action: R.Action, seq: UInt64, isStubbed: Bool)
    /// Called with each state `reduce` returned, and each forced state, before it becomes `version` (untransformed,
    /// as a `Checkpoint` holds it). Throwing refuses the state: the version does not change, no `didReduce` or
    /// `didForce` follows, observers see nothing, and the completion of the action that produced it reports
    /// `.stateRefused`. Called only when `vetsStates` is true.
    func vet(state: R.State, version: UInt64) throws(ActionRejection)
    /// Called when some middleware's `vet` refused a state; `seq` is the action whose mutation produced it,
    /// nil for a merged source's mutation or a forced state.
    func didRefuse(_ rejection: ActionRejection, seq: UInt64?)
    /// Called after each reduce with the untransformed state (what a `Checkpoint` holds), before any observer sees it.
    func didReduce(mutation: R.Mutation, state: R.State, version: UInt64)
    /// Called when stub mode forced a state, before any observer sees it.
    func didForce(state: R.State, version: UInt64)
    /// Called when an effect or a merged source threw; the runtime lives on.
    func didFail(error: any Error)
    /// Whether `intercept` does anything. Middlewares that only observe return false, and `send` then
    /// skips reading the state and calling them for every action. Default: true.
    var interceptsActions: Bool { get }
    /// Whether `vet` does anything; the runtime calls it after every reduce only for middlewares that
    /// say so. Default: false.
    var vetsStates: Bool { get }
}

extension ReactorMiddleware {
    /// Accepts every action.
    @inlinable public func intercept(action: R.Action, state: R.State) throws(ActionRejection) {}
    /// Does nothing.
    @inlinable public func didAccept(action: R.Action, seq: UInt64, isStubbed: Bool) {}
    /// Accepts every state.
    @inlinable public func vet(state: R.State, version: UInt64) throws(ActionRejection) {}
    /// Does nothing.
    @inlinable public func didRefuse(_ rejection: ActionRejection, seq: UInt64?) {}
    /// Does nothing.
    @inlinable public func didReduce(mutation: R.Mutation, state: R.State, version: UInt64) {}
    /// Does nothing.
    @inlinable public func didForce(state: R.State, version: UInt64) {}
    /// Does nothing.
    @inlinable public func didFail(error: any Error) {}
    /// True: `intercept` is called for every action.
    @inlinable public var interceptsActions: Bool { true }
    /// False: `vet` is never called.
    @inlinable public var vetsStates: Bool { false }
}
