import Reactors

/// A server-hosted session in the shape of a ReactorKit reactor: `send(_:)` for `reactor.action.onNext`, `state`
/// for `reactor.state`, `currentState`, and `pulse(\.$alert)`, so a view's binding moves from a local reactor to
/// the server in a few lines.
///
/// ```swift
/// // Before: let reactor = CounterViewReactor()          (ReactorKit, in the app)
/// let session = try await client.createSession(reactor: "counter", as: CounterReactor.self)
/// let reactor = try await RemoteReactor(session)
///
/// plusButton.addAction(UIAction { _ in reactor.send(.increase) }, for: .touchUpInside)
/// Task { for await state in reactor.state { valueLabel.text = "\(state.value)" } }
/// Task { for await alert in reactor.pulse(\.$alert) { if let alert { present(alert) } } }
/// Task { for await connection in reactor.connection { offlineBanner.isHidden = connection.isConnected } }
/// ```
///
/// Threading: the reactor is `Sendable` and may be used from any actor. One task follows the session's event
/// stream (reconnecting by itself) and keeps ``currentState`` up to date; each `for await` over ``state``,
/// ``connection`` or a pulse gets its own subscription, resumed on the caller's actor, and leaving the loop
/// ends only that subscription. The HTTP stream stays open while the reactor lives: ``stop()`` (or releasing
/// the last reference) closes it and finishes every sequence. Actions sent with ``send(_:)`` and
/// ``sendAndWait(_:)`` go out one at a time, in call order.
///
/// Unlike ReactorKit, `state` skips intermediate states for a reader that falls behind (it always ends at the
/// newest), and a pulse sequence reports only assignments made after it started (the current value is in the
/// state), as the server's stream does.
public final class RemoteReactor<R: Reactor>: Sendable where R.Action: Encodable {
    /// The session this reactor shows.
    public let session: RemoteSession<R>
    let mirror: ReactorMirror<R.State>
    let outbox: AsyncStream<Outgoing>.Continuation
    private let follower: Task<Void, Never>

    /// Follows `session`, showing `initialState` until the stream delivers the session's current state.
    public init(_ session: RemoteSession<R>, initialState: R.State) {
        self.session = session
        let mirror = ReactorMirror(state: initialState)
        self.mirror = mirror
        // The tasks hold the mirror and the session, never `self`: releasing the reactor stops them.
        follower = Task {
            for await event in session.events() { mirror.apply(event) }
            mirror.end(.stopped)
        }
        let (outgoing, outbox) = AsyncStream.makeStream(of: Outgoing.self)
        self.outbox = outbox
        Task {
            for await item in outgoing { await item.perform(on: session, reporting: mirror) }
        }
    }

    /// Fetches the session's current state (`GET /sessions/{id}`), then follows it.
    public convenience init(_ session: RemoteSession<R>) async throws(ReactorClientError) {
        let current = try await session.get()
        self.init(session, initialState: current.state)
    }

    deinit {
        stop()
    }

    /// The latest state the server sent (or the initial state until the first arrives).
    public var currentState: R.State { mirror.contents.withLock { $0.state } }
    /// The version of ``currentState``; nil while it is still the initial state given to `init`.
    public var currentVersion: UInt64? { mirror.contents.withLock { $0.version } }
    /// The connection of the event stream right now.
    public var connectionState: ConnectionState { mirror.contents.withLock { $0.connection } }
    /// The latest failure of an action sent with ``send(_:)``, nil while none failed.
    public var lastError: ReactorClientError? { mirror.contents.withLock { $0.lastError } }

    /// The current state, then each new one, until the session ends or the reactor stops (ReactorKit's `state`).
    public var state: AsyncStream<R.State> { mirror.states() }
    /// The connection state now, then each change (``ConnectionState``), for a status line.
    public var connection: AsyncStream<ConnectionState> { mirror.connections() }
    /// Failures of actions sent with ``send(_:)`` from now on (they are not retried: an action may have arrived);
    /// unlike the other sequences it goes on after the session ended, until the reactor stops.
    public var errors: AsyncStream<ReactorClientError> { mirror.errors() }

    /// Closes the event stream and finishes every sequence (connection: `.ended(.stopped)`); queued actions are
    /// still sent, later ones fail with ``ReactorClientError/cancelled``.
    public func stop() {
        follower.cancel()
        outbox.finish()
        mirror.end(.stopped)
        mirror.closeErrors()
    }
}
