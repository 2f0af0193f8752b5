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
    @usableFromInline let timing: ReduceTiming
    /// A reduce at least this long is logged; `.max`: never.
    @usableFromInline let slowNanoseconds: UInt64
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
        timing = context.metrics.reduceTiming(reactor: tracer.reactor)
        slowNanoseconds = context.limits.slowReduceNanoseconds == 0 ? .max : context.limits.slowReduceNanoseconds
        states = context.metrics.statesEmitted
        self.context = context
        self.tracer = tracer
    }

    /// The session's id.
    @inlinable var sessionID: String { tracer.session }

    @inlinable var initialState: State { base.initialState }

    @inlinable var scheduler: ReactorScheduler { base.scheduler }

    @inlinable func mutate(action: Action) -> Effect<Mutation> { base.mutate(action: action) }

    @inlinable func mutate(action: Action, state: State) -> Effect<Mutation> {
        base.mutate(action: action, state: state)
    }

    @inlinable
    func reduce(state: State, mutation: Mutation) -> State {
        let start = Self.nanoseconds()
        let next = base.reduce(state: state, mutation: mutation)
        let end = Self.nanoseconds()
        timing.histogram.observe(nanoseconds: end &- start)
        if end &- start >= slowNanoseconds { slowReduce(nanoseconds: end &- start) }
        states.increment()
        return next
    }

    /// Logs a reduce over `log.slowReduceMilliseconds`, at most once a second for the reactor. The duration is
    /// the thread's real time; the second it falls in is the service clock's, so that the rate limit moves with
    /// the clock the server was given.
    @usableFromInline
    func slowReduce(nanoseconds: UInt64) {
        let (allowed, unlogged) = timing.mayLog(atNanoseconds: context.clock.monotonicNanoseconds())
        guard allowed else { return }
        let scheduler = base.scheduler == .workers ? "workers" : "inline (on the thread that sent the action)"
        context.logger.warning(
            "a slow reduce: every action of this session waits for it, and an inline reactor's event loop too; "
                + "make reduce cheaper or give the reactor `scheduler: .workers`",
            [
                "reactor": .string(tracer.reactor), "session": .string(sessionID),
                "milliseconds": .double(Double(nanoseconds) / 1e6), "scheduler": .string(scheduler),
                "threshold_ms": .int(Int(slowNanoseconds / 1_000_000)), "slow_unlogged": .int(unlogged),
            ])
    }

    @inlinable func transform(action: Flow<Action>) -> Flow<Action> { base.transform(action: action) }

    @inlinable func transform(mutation: Flow<Mutation>) -> Flow<Mutation> { base.transform(mutation: mutation) }

    @inlinable func transform(state: State) -> State { base.transform(state: state) }

    @inlinable
    func recover(interrupted action: Action, state: State) -> [Mutation] {
        base.recover(interrupted: action, state: state)
    }

    @usableFromInline
    func effectDidFail(_ error: any Error) {
        base.effectDidFail(error)
        context.logger.warning(
            "an effect failed; the session goes on", ["session": .string(sessionID), "error": .string("\(error)")])
    }

    @inlinable
    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}
