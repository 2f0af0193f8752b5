import Logs
import Reactors

#if canImport(Glibc)
import Glibc
#endif

/// Wraps a reactor to time each `reduce` call into the reduce-latency histogram (and count the states
/// it makes); everything else is
/// passed through unchanged.
@usableFromInline
struct InstrumentedReactor<Base: Reactor>: Reactor {
    @usableFromInline typealias Action = Base.Action
    @usableFromInline typealias Mutation = Base.Mutation
    @usableFromInline typealias State = Base.State

    @usableFromInline let base: Base
    @usableFromInline let histogram: Histogram
    /// Counts new states: each reduce makes exactly one.
    @usableFromInline let states: Counter
    /// Where failed effects are logged, with the session's id (kept here rather than in a per-session
    /// error-handler closure, which would cost each session two more heap blocks).
    @usableFromInline let context: SessionContext
    /// The session's crash attribution, which also names it.
    @usableFromInline let tracer: SessionCallTracer

    @inlinable
    init(_ base: Base, context: SessionContext, tracer: SessionCallTracer) {
        self.base = base
        histogram = context.metrics.reduceLatency
        states = context.metrics.statesEmitted
        self.context = context
        self.tracer = tracer
    }

    /// The session's id.
    @inlinable var sessionID: String { tracer.session }

    @inlinable var initialState: State { base.initialState }

    @inlinable func mutate(action: Action) -> Effect<Mutation> { base.mutate(action: action) }

    @inlinable func mutate(action: Action, state: State) -> Effect<Mutation> { base.mutate(action: action, state: state) }

    @inlinable
    func reduce(state: State, mutation: Mutation) -> State {
        let start = Self.nanoseconds()
        let next = base.reduce(state: state, mutation: mutation)
        histogram.observe(nanoseconds: Self.nanoseconds() &- start)
        states.increment()
        return next
    }

    @inlinable func transform(action: Flow<Action>) -> Flow<Action> { base.transform(action: action) }

    @inlinable func transform(mutation: Flow<Mutation>) -> Flow<Mutation> { base.transform(mutation: mutation) }

    @inlinable func transform(state: State) -> State { base.transform(state: state) }

    @inlinable
    func recover(interrupted action: Action, state: State) -> [Mutation] { base.recover(interrupted: action, state: state) }

    @usableFromInline
    func effectDidFail(_ error: any Error) {
        base.effectDidFail(error)
        context.logger.warning("an effect failed; the session goes on", ["session": .string(sessionID), "error": .string("\(error)")])
    }

    @inlinable
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}
