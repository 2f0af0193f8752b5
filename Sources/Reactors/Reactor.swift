/// A ReactorKit-shaped unit of behaviour: actions become mutations (`mutate`), mutations fold into state (`reduce`).
///
/// ```swift
/// struct CounterReactor: Reactor {
///     enum Action: Codable, Sendable { case increase, decrease }
///     struct State: Codable, Sendable { var value = 0 }
///     let initialState = State()
///     func reduce(state: State, mutation: Action) -> State {
///         var state = state
///         switch mutation {
///         case .increase: state.value += 1
///         case .decrease: state.value -= 1
///         }
///         return state
///     }
/// }
/// let runtime = ReactorRuntime(CounterReactor())
/// try runtime.send(.increase)
/// ```
/// Every hook except `initialState` is optional and defaults to ReactorKit's behaviour.
public protocol Reactor: Sendable {
    /// What a user (or the HTTP client) asks for.
    associatedtype Action: Decodable & Sendable
    /// A change to apply to the state; defaults to `Action`.
    associatedtype Mutation: Codable & Sendable = Action
    /// What observers see; `Codable` so it can be sent, journaled and forced.
    associatedtype State: Codable & Sendable

    /// The state before any mutation, version 0.
    var initialState: State { get }
    /// Turns an action into an effect producing mutations;
    /// default: `.just(action)` when `Mutation == Action`, else `.none`.
    func mutate(action: Action) -> Effect<Mutation>
    /// Like `mutate(action:)` but also given the current (transformed) state; default: calls `mutate(action:)`.
    func mutate(action: Action, state: State) -> Effect<Mutation>
    /// Folds one mutation into the state; must be pure. Default: returns `state` unchanged.
    func reduce(state: State, mutation: Mutation) -> State
    /// Shapes the stream of actions before `mutate` (map, filter, merge a source of actions); default: identity.
    func transform(action: Flow<Action>) -> Flow<Action>
    /// Shapes the stream of mutations before `reduce`; merge a `SharedValue` here for global state. Default: identity.
    func transform(mutation: Flow<Mutation>) -> Flow<Mutation>
    /// Shapes what observers and `currentState` see; `reduce` keeps its own untransformed accumulator.
    /// Default: identity.
    func transform(state: State) -> State
    /// Called when an effect or merged source throws (never for cancellation): that effect ends, the
    /// reactor lives on. Default: nothing (the runtime's error handler, if any, is told too).
    func effectDidFail(_ error: any Error)
    /// A host that keeps sessions across restarts calls this once for each action whose effects a stop (a
    /// crash, `kill -9`, a shutdown past its deadline) cut off, when it loads the session again, with the
    /// (transformed) state then: the mutations that put the state right, such as a spinner turned off. The
    /// action itself is never run again. ReactorKit has no restarts, so it has no such hook. Default: none.
    func recover(interrupted action: Action, state: State) -> [Mutation]
    /// Whether `action` may come from outside the reactor (an HTTP client); false for an action only its own
    /// timers send (`Effect.schedule`), such as a reminder falling due: a client sending one is refused
    /// (422 `unknown_action` on a hosted session). Default: true.
    static func acceptsFromOutside(_ action: Action) -> Bool
    /// Where `mutate`, `reduce` and the transforms run (ReactorKit's `scheduler`): `.inline` on the thread that
    /// sends the action, or `.workers` on a pool that is never a server's event loop. Default: `.inline`.
    var scheduler: ReactorScheduler { get }

    /// The version of the types this reactor stores (`State` and `Mutation`), written with every stored record.
    /// Raise it when stored data can no longer be decoded as it is, and read older data in the two `migrate` hooks.
    /// Default: 1. A host that keeps sessions uses these three; ReactorKit keeps nothing, so it has none of them.
    static var storageVersion: Int { get }
    /// A state stored by the earlier version `version` of this reactor, as today's `State`: read the stored JSON
    /// with `decoder` (as an old type of yours, or member by member). Throw when it cannot be read (the session
    /// then cannot be served, and says why). Default: nil, which decodes it as today's `State`, members it lacks
    /// taken from `initialState`.
    func migrate(state decoder: any Decoder, from version: Int) throws -> State?
    /// A mutation stored by the earlier version `version`: the mutations that stand for it today, reduced in
    /// its place (none drops it; the version it made keeps its number). Default: nil, which decodes it as
    /// today's `Mutation`.
    func migrate(mutation decoder: any Decoder, from version: Int) throws -> [Mutation]?
}

extension Reactor {
    /// ReactorKit's default: an action that is not handled produces nothing.
    @inlinable public func mutate(action: Action) -> Effect<Mutation> { .none }
    /// Calls `mutate(action:)`; override to read the state without capturing the runtime.
    @inlinable public func mutate(action: Action, state: State) -> Effect<Mutation> { mutate(action: action) }
    /// Leaves the state unchanged.
    @inlinable public func reduce(state: State, mutation: Mutation) -> State { state }
    /// Identity.
    @inlinable public func transform(action: Flow<Action>) -> Flow<Action> { action }
    /// Identity.
    @inlinable public func transform(mutation: Flow<Mutation>) -> Flow<Mutation> { mutation }
    /// Identity.
    @inlinable public func transform(state: State) -> State { state }
    /// Nothing.
    @inlinable public func effectDidFail(_ error: any Error) {}
    /// No mutations: the state stays as the cut-off effects left it.
    @inlinable public func recover(interrupted action: Action, state: State) -> [Mutation] { [] }
    /// Every action may come from a client.
    @inlinable public static func acceptsFromOutside(_ action: Action) -> Bool { true }
    /// Inline: a reduce of microseconds costs no hand-off.
    @inlinable public var scheduler: ReactorScheduler { .inline }
    /// Version 1: stored data is decoded as the types are now.
    @inlinable public static var storageVersion: Int { 1 }
    /// Nil: an older state is decoded as today's `State`.
    @inlinable public func migrate(state decoder: any Decoder, from version: Int) throws -> State? { nil }
    /// Nil: an older mutation is decoded as today's `Mutation`.
    @inlinable public func migrate(mutation decoder: any Decoder, from version: Int) throws -> [Mutation]? { nil }
}

extension Reactor where Mutation == Action {
    /// When mutations are the actions themselves, every action passes straight to `reduce`.
    @inlinable public func mutate(action: Action) -> Effect<Mutation> { .just(action) }
}
