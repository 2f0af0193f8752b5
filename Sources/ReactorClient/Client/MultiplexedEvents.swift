import JSONCodec

/// The events of several sessions over one connection (`GET /events?sessions=a,b,c`), reconnecting by itself.
///
/// Every event names its session; states come per session in version order, interleaved across sessions. The
/// stream's `id:` is one opaque cursor for all of them: after a drop the same request is sent again with it as
/// `Last-Event-ID`, and each session resumes without a repeated version. `.end(session:reason:)` ends one
/// session's part (deleted; `unknown_session`; `unauthorized` in `token` mode), reported once; the sequence
/// finishes when every part has ended. In `token` mode the tokens travel as `access_token=t1,t2,…` in the order
/// of the sessions (an empty entry for a session without one); a JWT travels as `Authorization: Bearer`.
/// Iterating owns the connection exactly as ``SessionEvents`` does, and patches are asked for and applied as there: a
/// patch that does not apply reconnects with the cursor from before it, and that session's state comes whole.
///
/// ```swift
/// let stream = client.events(for: [left.access, right.access])
/// for await event in stream {
///     if case .state(let id, let update) = event {
///         let state = try update.decoded(as: CounterReactor.State.self)
///         counters[id] = state.state.value
///     }
/// }
/// ```
public struct MultiplexedEvents: AsyncSequence, Sendable {
    /// One event of one session, or a connection change.
    public typealias Element = MultiplexedEvent
    /// The sequence never throws: how it ended is its last element.
    public typealias Failure = Never

    let client: ReactorClient
    let sessions: [SessionAccess]
    let select: String?

    /// Starts the connection and returns the iterator that owns it.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let driver = self.driver
        let ids = Set(sessions.map(\.id))
        let task = Task {
            let reader = MultiplexedEventReader(sessions: ids)
            let end = await driver.run(
                lastEventID: "",
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

    /// The reconnecting loop for this list of sessions and their credentials.
    var driver: EventStreamDriver {
        let transport = client.transport
        let configuration = client.configuration
        var query = [("sessions", sessions.map(\.id).joined(separator: ","))]
        if let select { query.append(("select", select)) }
        if configuration.statePatches { query.append(("delta", "json-patch")) }
        var bearer = client.bearerToken
        if sessions.contains(where: { $0.token != nil }) {
            query.append(("access_token", sessions.map { $0.token ?? "" }.joined(separator: ",")))
            bearer = nil
        } else if let token = bearer, configuration.streamCredentials == .accessTokenParameter {
            query.append(("access_token", token))
            bearer = nil
        }
        let url = transport.url(["events"], query: query)
        return EventStreamDriver(configuration: configuration) { [bearer] lastEventID in
            .eventStream(url, lastEventID: lastEventID, bearer: bearer)
        }
    }
}

extension MultiplexedEvents {
    /// Owns one multiplexed connection: it closes when the iterator goes away or its task is cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<MultiplexedEvent>.Iterator

        /// The next event; nil after `.connection(.ended(_))`, or once the task is cancelled.
        public mutating func next() async -> MultiplexedEvent? {
            await base.next()
        }

        /// The next event, resuming on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> MultiplexedEvent? {
            await base.next(isolation: actor)
        }
    }
}

/// One thing a multiplexed stream reports.
public enum MultiplexedEvent: Sendable, Hashable {
    /// A state of session `session` (decode it with ``VersionedState/decoded(as:)``).
    case state(session: String, VersionedState<JSONValue>)
    /// A pulse of session `session`.
    case pulse(session: String, PulseEvent)
    /// Session `session`'s part is over: deleted, `unknown_session`, or `unauthorized`.
    case end(session: String, reason: String)
    /// The connection changed; the last event is always `.connection(.ended(_))`.
    case connection(ConnectionState)
}

/// How the events of a multiplexed stream read: which parts have ended, and each session's state as JSON, so
/// that its patches apply. One reader per iteration, used by its task alone.
final class MultiplexedEventReader {
    let sessions: Set<String>
    /// The sessions whose part is over (reported once, also across reconnections).
    private var ended: Set<String> = []
    /// Per session, its state (or selected value) as the current connection's events built it, and its version.
    private var documents: [String: (version: UInt64, value: JSONValue)] = [:]
    /// The cursor of the last event read: where a stream whose patch did not apply resumes.
    private var resumeCursor = ""

    init(sessions: Set<String>) {
        self.sessions = sessions
    }

    /// A new connection starts each session with a whole state.
    func connecting() {
        documents = [:]
    }

    /// The verdict on one event and the element to deliver.
    func read(_ event: ServerSentEvent) -> (EventVerdict, MultiplexedEvent?) {
        do throws(ReactorClientError) {
            switch event.type {
            case "state":
                let data = try APIResponse.parse(event: event)
                let session = try APIResponse.string(data, "session")
                let update = VersionedState(
                    version: try APIResponse.integer(data, "version"), state: try APIResponse.member(data, "state"))
                documents[session] = (update.version, update.state)
                resumeCursor = event.lastEventID
                return (.next, .state(session: session, update))
            case "patch":
                let data = try APIResponse.parse(event: event)
                let session = try APIResponse.string(data, "session")
                let version = try APIResponse.integer(data, "version")
                guard let document = documents[session], version > document.version else {
                    let had = documents[session].map { "version \($0.version)" } ?? "no state"
                    let cause = ReactorClientError.invalidResponse(
                        "a patch of session \(session) to version \(version) came with \(had) to apply it to")
                    return (.resync(cause, lastEventID: resumeCursor), nil)
                }
                let state: JSONValue
                do {
                    state = try JSONPatch(document: try APIResponse.member(data, "patch")).apply(to: document.value)
                } catch {
                    let cause = ReactorClientError.invalidResponse(
                        "the patch of session \(session) to version \(version) does not apply to version "
                            + "\(document.version): \(error)")
                    return (.resync(cause, lastEventID: resumeCursor), nil)
                }
                documents[session] = (version, state)
                resumeCursor = event.lastEventID
                return (.next, .state(session: session, VersionedState(version: version, state: state)))
            case "pulse":
                let data = try APIResponse.parse(event: event)
                return (.next, .pulse(session: try APIResponse.string(data, "session"), try PulseEvent(data)))
            case "end":
                let data = try APIResponse.parse(event: event)
                let session = try APIResponse.string(data, "session")
                resumeCursor = event.lastEventID
                documents[session] = nil
                // A reconnect asks for every session again: a part that ended before ends again, unreported.
                guard ended.insert(session).inserted else { return (.next, nil) }
                let element = MultiplexedEvent.end(session: session, reason: data["reason"]?.stringValue ?? "ended")
                return (
                    sessions.isSubset(of: ended) ? .finish(reason: "every session of the stream ended") : .next, element
                )
            case "error":
                return (.reconnect(SessionEventReading.streamError(event)), nil)
            default:
                return (.next, nil)
            }
        } catch {
            return (.fail(error), nil)
        }
    }
}
