/// The work an action starts: mutations produced now (`just`, `concat`), later (`run`, `delay`), or never (`none`).
///
/// ```swift
/// func mutate(action: Action) -> Effect<Mutation> {
///     switch action {
///     case .search(let query):
///         return .concat([
///             .just(.setLoading(true)),
///             .run { emit in await emit(.setResults(try await api.search(query))) },
///             .just(.setLoading(false)),
///         ]).cancellable(id: "search", cancelInFlight: true)
///     }
/// }
/// ```
/// Synchronous effects (`none`, `just`, and `concat`/`merge` of them) run inline on the thread that
/// reduces, without a task; `run` and `delay` start one task per effect.
public struct Effect<Mutation: Sendable>: Sendable {
    /// Only the cases that hold an effect are boxed: with the whole enum indirect, every `just` (one
    /// per action of most reactors) allocated a box and freed it (~270 instructions per action).
    @usableFromInline
    enum Kind: Sendable {
        case none
        case just(Mutation)
        case concat([Effect])
        case merge([Effect])
        case run(@Sendable (Emitter<Mutation>) async throws -> Void)
        indirect case delay(Effect, Duration, any Clock<Duration>)
        indirect case cancellable(Effect, EffectID, cancelInFlight: Bool)
        case cancel(EffectID)
        // Rare, and its command (a name, a delay, an action) would widen every effect: boxed too.
        indirect case timer(TimerCommand)
    }

    @usableFromInline let kind: Kind
    /// True when running the effect needs no task: no `run` or `delay` anywhere inside.
    @usableFromInline let isSynchronous: Bool

    @inlinable init(_ kind: Kind, isSynchronous: Bool) {
        self.kind = kind
        self.isSynchronous = isSynchronous
    }

    /// Produces nothing.
    @inlinable public static var none: Effect { Effect(.none, isSynchronous: true) }

    /// Produces one mutation, reduced before `send` returns when the runtime is idle.
    @inlinable public static func just(_ mutation: Mutation) -> Effect { Effect(.just(mutation), isSynchronous: true) }

    /// Runs the effects one after another; a later one starts only when the earlier one has finished.
    @inlinable public static func concat(_ effects: [Effect]) -> Effect {
        Effect(.concat(effects), isSynchronous: effects.allSatisfy(\.isSynchronous))
    }

    /// Runs the effects one after another; a later one starts only when the earlier one has finished.
    @inlinable public static func concat(_ effects: Effect...) -> Effect { concat(effects) }

    /// Starts all the effects at once; their mutations interleave.
    @inlinable public static func merge(_ effects: [Effect]) -> Effect {
        Effect(.merge(effects), isSynchronous: effects.allSatisfy(\.isSynchronous))
    }

    /// Starts all the effects at once; their mutations interleave.
    @inlinable public static func merge(_ effects: Effect...) -> Effect { merge(effects) }

    /// Runs async work in its own task; `await emit(m)` returns once `m` is reduced. Throwing ends only this effect.
    @inlinable public static func run(_ operation: @escaping @Sendable (Emitter<Mutation>) async throws -> Void)
        -> Effect
    {
        Effect(.run(operation), isSynchronous: false)
    }

    /// Waits `duration` on `clock` (inject a test clock in tests), then runs this effect.
    @inlinable public func delay(for duration: Duration, clock: any Clock<Duration> = ContinuousClock()) -> Effect {
        Effect(.delay(self, duration, clock), isSynchronous: false)
    }

    /// Tags the tasks this effect starts with `id`, so `cancel(id:)` can stop them;
    /// `cancelInFlight` first cancels the tasks already running under `id` (a new search replaces the old one).
    @inlinable public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Effect {
        Effect(.cancellable(self, EffectID(id), cancelInFlight: cancelInFlight), isSynchronous: isSynchronous)
    }

    /// Cancels every running task tagged `id`; a mutation they emit afterwards is dropped.
    @inlinable public static func cancel(id: some Hashable & Sendable) -> Effect {
        Effect(.cancel(EffectID(id)), isSynchronous: true)
    }

    /// Schedules `action` (one of the reactor's own actions) to be sent to this reactor after `delay`, under
    /// `name`; scheduling a name again replaces its timer. A host keeps timers durably (a hosted session
    /// fires them after a passivation or a restart); a runtime without a timer handler reports an error.
    @inlinable public static func schedule(_ name: String, after delay: Duration, _ action: some Sendable) -> Effect {
        Effect(.timer(.schedule(name: name, delay: delay, action: action)), isSynchronous: true)
    }

    /// Cancels the timer named `name`, if one is pending.
    @inlinable public static func cancelTimer(_ name: String) -> Effect {
        Effect(.timer(.cancel(name: name)), isSynchronous: true)
    }

    /// Transforms every mutation this effect produces.
    @inlinable public func map<T: Sendable>(_ transform: @escaping @Sendable (Mutation) -> T) -> Effect<T> {
        switch kind {
        case .none: .none
        case .just(let mutation): .just(transform(mutation))
        case .concat(let effects): .concat(effects.map { $0.map(transform) })
        case .merge(let effects): .merge(effects.map { $0.map(transform) })
        case .run(let operation):
            .run { emit in try await operation(Emitter { await emit(transform($0)) }) }
        case .delay(let effect, let duration, let clock): effect.map(transform).delay(for: duration, clock: clock)
        case .cancellable(let effect, let id, let cancelInFlight):
            Effect<T>(
                .cancellable(effect.map(transform), id, cancelInFlight: cancelInFlight), isSynchronous: isSynchronous)
        case .cancel(let id): Effect<T>(.cancel(id), isSynchronous: true)
        case .timer(let command): Effect<T>(.timer(command), isSynchronous: true)
        }
    }
}

/// Hands a mutation from a running effect to its runtime; `await emit(m)` returns once `m` is reduced
/// (or at once if the effect was cancelled or the runtime stopped, in which case `m` is dropped).
public struct Emitter<Mutation: Sendable>: Sendable {
    @usableFromInline let body: @Sendable (Mutation) async -> Void

    /// Wraps a function that delivers mutations; the runtime makes these, tests may too.
    @inlinable public init(_ body: @escaping @Sendable (Mutation) async -> Void) { self.body = body }

    /// Delivers `mutation` and waits until it is reduced.
    @inlinable public func callAsFunction(_ mutation: Mutation) async { await body(mutation) }
}

/// A type-erased cancellation id; built only from `Hashable & Sendable` values, hence the unchecked conformance.
@usableFromInline
struct EffectID: Hashable, @unchecked Sendable {
    @usableFromInline let base: AnyHashable
    @inlinable init(_ base: some Hashable & Sendable) { self.base = AnyHashable(base) }
}
