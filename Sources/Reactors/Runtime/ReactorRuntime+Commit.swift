import Synchronization

// Making states: reduce or force, let vetters refuse, commit as the next version, tell middlewares and observers.
extension ReactorRuntime {
    /// Reduces one mutation and, unless a vetter refuses the result, publishes the new state, then tells
    /// middlewares and observers. `outcome` is where the action it belongs to waits (for a held mutation).
    @inlinable
    func apply(_ mutation: R.Mutation, isTransformed: Bool, outcome: ActionOutcome?, _ drain: inout DrainState<R>) {
        var mutation = mutation
        if !isTransformed, let pipeline {
            if let transform = pipeline.mutationTransform {
                let transformed = traced(.transformMutation, seq: drain.seq, version: drain.version) {
                    transform(mutation)
                }
                guard let transformed else { return }
                mutation = transformed
            }
            if let chain = pipeline.flows?.mutations {
                let ticket = FlowTicket(seq: drain.seq, outcome: outcome)
                // The chain's stages run the reactor's closures (and `removeDuplicates`' comparison).
                let entered = traced(.transformMutation, seq: drain.seq, version: drain.version) {
                    chain.enter(mutation, at: 0, ticket)
                }
                guard case .passed(let passed) = entered else { return }
                mutation = passed
            }
        }
        let state = traced(.reduce, seq: drain.seq, version: drain.version &+ 1) {
            reactor.reduce(state: drain.state, mutation: mutation)
        }
        if drain.vetters != 0, isRefused(state, &drain) { return }
        let (observers, previous) = commit(state, &drain)
        let version = drain.version
        for middleware in drain.middlewares { middleware.didReduce(mutation: mutation, state: state, version: version) }
        notify(observers, previous: previous, drain)
    }

    /// Emits a forced (stub) state as a new version, unless a vetter refuses it. Every pulse of the forced
    /// state counts as assigned: its count continues from the state it replaces, so it never goes back.
    @inlinable
    func force(_ forced: R.State, _ drain: inout DrainState<R>) {
        var state = forced
        pipeline?.pulses?.force(&state, replacing: drain.state)
        if drain.vetters != 0, isRefused(state, &drain) { return }
        let (observers, previous) = commit(state, &drain)
        let version = drain.version
        for middleware in drain.middlewares { middleware.didForce(state: state, version: version) }
        notify(observers, previous: previous, drain)
    }

    /// Asks each vetter about `state`; on the first refusal tells every middleware, notes it in the drain
    /// for the action's completion, and returns true.
    @inlinable
    func isRefused(_ state: R.State, _ drain: inout DrainState<R>) -> Bool {
        let vetters = drain.vetters
        let version = drain.version &+ 1
        let seq = drain.seq
        let refusal = drain.middlewares.withUnsafeBufferPointer { middlewares -> ActionRejection? in
            for index in middlewares.indices where vetters & (1 << min(index, 63)) != 0 {
                if index >= 63, !middlewares[index].vetsStates { continue }
                do throws(ActionRejection) {
                    try middlewares[index].vet(state: state, version: version)
                } catch {
                    for other in middlewares.indices { middlewares[other].didRefuse(error, seq: seq) }
                    return error
                }
            }
            return nil
        }
        guard let refusal else { return false }
        if drain.refusal == nil { drain.refusal = StateRefusal(refusal) }
        return true
    }

    /// Makes `state` the next version (shown through `transform(state:)`), in the drain and in the
    /// core that `currentState` reads; returns the observers to notify and the previously shown state.
    @inlinable
    func commit(_ state: R.State, _ drain: inout DrainState<R>) -> (observers: ObserverList<R.State>, previous: R.State)
    {
        let shown = traced(.transformState, seq: drain.seq, version: drain.version &+ 1) {
            reactor.transform(state: state)
        }
        let previous = drain.shown
        drain.state = state
        drain.shown = shown
        drain.version &+= 1
        let observers = core.withLock { core in
            core.state = state
            core.shown = shown
            core.version &+= 1
            return core.observers
        }
        return (observers, previous)
    }

    /// Hands the drain's current snapshot, with the pulses assigned since `previous`, to every observer.
    @inlinable
    func notify(_ observers: ObserverList<R.State>, previous: R.State, _ drain: DrainState<R>) {
        guard !observers.isEmpty else { return }
        let pulses = pipeline?.pulses?.changes(from: previous, to: drain.shown) ?? []
        if !observers.deliver(.state(drain.snapshot, pulses: pulses)) {
            core.withLock { $0.observers.removeInactive() }
        }
    }
}
