import JSONCodec
import Reactors
import Synchronization

// The session's state limit: made by the first change, then consulted for every state's JSON.
extension Session {
    /// The state limit, attached to the runtime if this is the first change. Every path that changes the
    /// state calls it first, holding the action-log lock, so nothing is reduced before the limit is in place.
    @inlinable @discardableResult
    func ensureStateLimit() -> StateLimit<InstrumentedReactor<R>> {
        if let stateLimit { return stateLimit }
        let made = makeStateLimit(self)
        // The current state's size: a state over a since-lowered limit may still change if it does not grow.
        let current = runtime.checkpoint.state
        let measured = try? tracer.run(.encodeState, version: runtime.currentVersion) {
            try JSONValueEncoder().encode(current)
        }
        if let json = measured {
            made.remember(current, json: json)
        }
        let owned = Unmanaged.passRetained(made)
        let (exchanged, existing) = stateLimitPointer.compareExchange(
            expected: 0, desired: UInt(bitPattern: owned.toOpaque()), ordering: .acquiringAndReleasing)
        guard exchanged else {
            owned.release()
            return Unmanaged<StateLimit<InstrumentedReactor<R>>>.fromOpaque(UnsafeRawPointer(bitPattern: existing)!)
                .takeUnretainedValue()
        }
        runtime.addMiddleware(made)
        return made
    }

    /// The state limit, once the first change made it.
    @inlinable
    var stateLimit: StateLimit<InstrumentedReactor<R>>? {
        UnsafeRawPointer(bitPattern: stateLimitPointer.load(ordering: .acquiring)).map {
            Unmanaged<StateLimit<InstrumentedReactor<R>>>.fromOpaque($0).takeUnretainedValue()
        }
    }

    /// The JSON of `state` (of version `version`): the one the state limit measured when it is that state,
    /// else a fresh encoding (the reactor's own `Encodable`, pinned on the session).
    @inlinable
    func json(of state: R.State, version: UInt64) throws -> [UInt8] {
        if let stateLimit { return try stateLimit.json(of: state, version: version) }
        return try tracer.run(.encodeState, version: version) { try JSONValueEncoder().encode(state) }
    }

    /// Why the states of these actions were refused, for those that were.
    @usableFromInline
    func refusedActions(_ seqs: [UInt64]) -> [UInt64: ActionRejection] {
        stateLimit?.refusals(of: seqs) ?? [:]
    }
}
