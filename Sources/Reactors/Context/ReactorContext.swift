import Synchronization

/// The session a reactor runs in, as the reactor's own code reaches it: the session's id, its parameters
/// (the inputs given when it was created, ReactorKit's `ProfileViewReactor(userID:)`), the clock to sleep
/// on, a logger that tags the session, and from an effect the state *now* (ReactorKit's `currentState`)
/// and a way to send the session one of its own actions (Reactor/Core's `fire(event:)`).
///
/// ```swift
/// struct ProfileReactor: Reactor {
///     struct Params: Codable, Sendable { var userID: Int }
///     let context: ReactorContext<ProfileReactor, Params>
///     var initialState: State { State(userID: context.params.userID) }
///     func mutate(action: Action) -> Effect<Mutation> {
///         .run { [context] emit in
///             let following = try await users.isFollowing(context.params.userID)
///             await emit(.setFollowing(following))
///             if context.currentState.isFollowing { try await context.send(.refreshFollowers) }
///         }
///     }
/// }
/// catalog.register("profile", params: ProfileReactor.Params.self) { context in ProfileReactor(context: context) }
/// ```
/// A host makes the context before the reactor and attaches it to the session's runtime once that exists
/// (``attach(_:)``); `currentState` and `send` are for effects, which run after that.
public final class ReactorContext<R: Reactor, Params: Sendable>: Sendable {
    /// The id of the session the reactor runs in.
    public let sessionID: String
    /// The session's parameters, decoded from `"params"` of `POST /sessions` (stored with the session).
    public let params: Params
    /// The clock effects should sleep on: the server's (a test's injected one), so tests move time.
    public let clock: any Clock<Duration>
    /// Writes log lines tagged with the session's id.
    public let logger: ReactorLogger
    private let host = Mutex<ReactorContextHost<R>?>(nil)

    /// A context for session `sessionID` with its parameters; attach it to the session's runtime before use.
    public init(
        sessionID: String, params: Params, clock: any Clock<Duration> = ContinuousClock(),
        logger: ReactorLogger = .printing
    ) {
        self.sessionID = sessionID
        self.params = params
        self.clock = clock
        self.logger = logger
    }

    /// Connects the context to the running session; a later call replaces the earlier host.
    public func attach(_ host: ReactorContextHost<R>) {
        self.host.withLock { $0 = host }
    }

    /// Connects the context to a plain runtime (tests, a reactor run outside the server).
    public func attach(to runtime: ReactorRuntime<R>) {
        attach(ReactorContextHost(runtime: runtime, owner: runtime, ended: ReactorError.stopped) { try $0.send($1) })
    }

    /// The session's state now, as observers see it: read from an effect after it awaited, it shows what
    /// happened meanwhile (ReactorKit's `currentState`), not the state when the action arrived. Reading it
    /// before the host attached the context (in the reactor's `init`) is a programming error.
    public var currentState: R.State {
        guard let host = host.withLock({ $0 }) else {
            preconditionFailure(
                "ReactorContext.currentState of session \(sessionID) was read before the session started; read it "
                    + "from effects (use initialState in the reactor's init)")
        }
        return host.currentState()
    }

    /// Sends the session one of its own actions from an effect: it is queued behind those already waiting,
    /// journaled and listed in the action log like any other (marked `"from": "effect"`), and returns its
    /// seq. Throws when the session has stopped or a middleware refused the action; a throw that ends the
    /// effect is logged, the session lives on.
    @discardableResult
    public func send(_ action: R.Action) async throws -> UInt64 {
        guard let host = host.withLock({ $0 }) else { throw ReactorContextError.notAttached(sessionID: sessionID) }
        return try host.send(action)
    }
}

/// What a host (the server's session, a test's runtime) gives a ``ReactorContext`` to reach the running session.
public struct ReactorContextHost<R: Reactor>: Sendable {
    /// Reads the session's state as observers see it now.
    public var currentState: @Sendable () -> R.State
    /// Queues an action to the session as if it had been sent to it, marked as sent by an effect; its seq.
    public var send: @Sendable (R.Action) throws -> UInt64

    /// A host from its two functions.
    public init(
        currentState: @escaping @Sendable () -> R.State, send: @escaping @Sendable (R.Action) throws -> UInt64
    ) {
        self.currentState = currentState
        self.send = send
    }
}

extension ReactorContextHost {
    /// A host over a running session: the state is `runtime`'s (the reactor's own runtime, or one of a
    /// reactor wrapping it), and an effect's action goes to `owner` (the runtime itself, or the session around
    /// it) through `send`. Both are held weakly, since the runtime holds the reactor, which holds the context
    /// (a running effect holds the runtime); once `owner` is gone, `send` throws `ended`.
    public init<Running: Reactor, Owner: AnyObject & Sendable>(
        runtime: ReactorRuntime<Running>, owner: Owner, ended: some Error & Sendable,
        send: @escaping @Sendable (Owner, R.Action) throws -> UInt64
    ) where Running.State == R.State {
        self.init(
            currentState: { [weak runtime] in
                guard let runtime else {
                    preconditionFailure("ReactorContext.currentState read after its session ended")
                }
                return runtime.currentState
            },
            send: { [weak owner] action in
                guard let owner else { throw ended }
                return try send(owner, action)
            })
    }
}

/// Why a ``ReactorContext`` could not do what was asked.
public enum ReactorContextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The context is not attached to a running session (yet).
    case notAttached(sessionID: String)

    /// One sentence saying what happened.
    public var description: String {
        switch self {
        case .notAttached(let id): "the context of session \(id) is not attached to a running session yet"
        }
    }
}
