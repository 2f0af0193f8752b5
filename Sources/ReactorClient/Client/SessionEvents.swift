/// The live events of one session (`GET /sessions/{id}/events`) as an `AsyncSequence` that reconnects by itself.
///
/// It asks for patches after the first state (``ReactorClient/Configuration/statePatches``), applies them and
/// delivers whole states; a patch that does not apply is followed by `.connection(.reconnecting)` and a new
/// request from the last state it read, which the server answers with a whole state.
///
/// Each iteration opens its own connection when it starts and closes it when it stops: leaving the `for await`
/// loop, cancelling the task that runs it, or dropping the iterator cancels the HTTP request at once (the server
/// then drops the subscriber). In between, a dropped connection, an `event: error` (`session_moved`,
/// `session_passivated`, `subscriber_too_slow`) or a 5xx answer are followed by `.connection(.reconnecting)`,
/// a wait, and a new request with `Last-Event-ID`, so no version is delivered twice. `event: end` (the session
/// was deleted) and refusals that waiting cannot cure (404, 401, 403, 409) end the sequence; its last element
/// is always `.connection(.ended(reason))`.
///
/// ```swift
/// for await event in session.events() {
///     switch event {
///     case .state(let update): render(update.state)
///     case .pulse(let pulse): if pulse.name == "alert" { showAlert(try pulse.value(as: String?.self)) }
///     case .connection(let connection): statusLine = connection.description
///     }
/// }
/// ```
/// The connection runs in its own task; events wait in an unbounded buffer until the loop takes them.
public struct SessionEvents<State: Decodable & Sendable>: AsyncSequence, Sendable {
    /// One state, pulse or connection change.
    public typealias Element = SessionEvent<State>
    /// The sequence never throws: how it ended is its last element.
    public typealias Failure = Never

    let session: SessionAccess
    let client: ReactorClient
    let select: String?
    let lastEventID: String

    /// Starts the connection and returns the iterator that owns it.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let driver = self.driver
        let lastEventID = self.lastEventID
        let task = Task {
            let reader = SessionEventReader<State>(lastEventID: lastEventID)
            let end = await driver.run(
                lastEventID: lastEventID,
                connection: { state in
                    if case .connecting = state { reader.connecting() }
                    continuation.yield(.connection(state))
                }
            ) { event in
                let (verdict, element) = reader.read(event)
                if let element { continuation.yield(element) }
                return verdict
            }
            continuation.yield(.connection(.ended(end)))
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// The reconnecting loop for this session's URL and credential.
    var driver: EventStreamDriver {
        let transport = client.transport
        let configuration = client.configuration
        var query: [(String, String)] = []
        if let select { query.append(("select", select)) }
        if configuration.statePatches { query.append(("delta", "json-patch")) }
        var bearer = client.credential(token: session.token)
        if let token = bearer, configuration.streamCredentials == .accessTokenParameter {
            query.append(("access_token", token))
            bearer = nil
        }
        let url = transport.url(["sessions", session.id, "events"], query: query)
        return EventStreamDriver(configuration: configuration) { [bearer] lastEventID in
            .eventStream(url, lastEventID: lastEventID, bearer: bearer)
        }
    }

    /// Owns one connection: it closes when the iterator goes away or its task is cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.Iterator

        /// The next event; nil after `.connection(.ended(_))`, or once the task is cancelled.
        public mutating func next() async -> Element? {
            await base.next()
        }

        /// The next event, resuming on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await base.next(isolation: actor)
        }
    }
}

/// The states of one session and nothing else: ends normally when the session is deleted, throws the
/// ``ReactorClientError`` that ended its stream otherwise. Connection drops are retried silently.
///
/// ```swift
/// for try await update in session.states() { label.text = "\(update.state.value)" }
/// ```
public struct SessionStates<State: Decodable & Sendable>: AsyncSequence, Sendable {
    /// A state with its version.
    public typealias Element = VersionedState<State>
    /// Why the stream could not go on.
    public typealias Failure = ReactorClientError

    let events: SessionEvents<State>

    /// Starts the connection.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: events.makeAsyncIterator())
    }

    /// Owns one connection, as ``SessionEvents/Iterator`` does.
    public struct Iterator: AsyncIteratorProtocol {
        var base: SessionEvents<State>.Iterator

        /// The next state; nil when the session ended or the task was cancelled.
        public mutating func next() async throws(ReactorClientError) -> Element? {
            while let event = await base.next() {
                if let state = try Self.state(event) { return state }
            }
            return nil
        }

        /// The next state, resuming on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ReactorClientError) -> Element? {
            while let event = await base.next(isolation: actor) {
                if let state = try Self.state(event) { return state }
            }
            return nil
        }

        private static func state(_ event: SessionEvent<State>) throws(ReactorClientError) -> Element? {
            switch event {
            case .state(let state): return state
            case .connection(.ended(.failed(let error))): throw error
            case .pulse, .connection: return nil
            }
        }
    }
}
