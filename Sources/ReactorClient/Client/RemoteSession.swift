import JSONCodec
import Reactors

/// One session on the server, typed by the reactor it hosts: its requests and its event stream.
///
/// ```swift
/// let todo = try await client.createSession(reactor: "todo", as: TodoReactor.self)
/// let receipt = try await todo.send(.add(title: "milk"))            // 202: queued as action `receipt`
/// let result = try await todo.sendAndWait(.toggle(id: 1))          // 200 once reduced
/// print(result.version, result.state.items)
/// for await event in todo.events() {                                // states, pulses, connection changes
///     if case .pulse(let pulse) = event { print(pulse.name, pulse.value) }
/// }
/// try await todo.delete()
/// ```
/// A handle is a value: copies address the same session. Making one sends nothing.
public struct RemoteSession<R: Reactor>: Sendable {
    /// The client whose server hosts the session.
    public let client: ReactorClient
    /// The session's id.
    public let id: String
    /// Its capability token (`token` mode): from the create answer, or given to ``ReactorClient/session(_:as:token:)``.
    public var token: String?
    /// What the create (or fork) answer held: the first version and its state; nil for handles made from an id.
    public let created: VersionedState<R.State>?

    init(client: ReactorClient, id: String, token: String?) {
        self.client = client
        self.id = id
        self.token = token
        self.created = nil
    }

    /// From a `201` body `{"id", "reactor", "version", "state", "token"?}`.
    init(client: ReactorClient, created body: JSONValue) throws(ReactorClientError) {
        self.client = client
        id = try APIResponse.string(body, "id")
        token = body["token"]?.stringValue
        created = try VersionedState(body, as: R.State.self, "the created session's state")
    }

    /// Who this handle addresses, for a multiplexed stream.
    public var access: SessionAccess { SessionAccess(id: id, token: token) }

    var credential: String? { client.credential(token: token) }

    /// `GET /sessions/{id}`: the current version and state.
    public func get() async throws(ReactorClientError) -> VersionedState<R.State> {
        let transport = client.transport
        let body = try await transport.json(transport.request("GET", ["sessions", id], bearer: credential))
        return try VersionedState(body, as: R.State.self, "session \(id)'s state")
    }

    /// `DELETE /sessions/{id}`: ends the session; its streams get `event: end`.
    public func delete() async throws(ReactorClientError) {
        let transport = client.transport
        _ = try await transport.send(transport.request("DELETE", ["sessions", id], bearer: credential))
    }

    /// The session's events: states decoded as `State`, pulses, and the connection's changes, reconnecting by
    /// itself. `lastEventID` resumes after a version already seen. See ``SessionEvents``.
    public func events(lastEventID: String = "") -> SessionEvents<R.State> {
        SessionEvents(session: access, client: client, select: nil, lastEventID: lastEventID)
    }

    /// The states only, as they arrive; ends when the session is deleted, throws when the stream is refused.
    public func states(lastEventID: String = "") -> SessionStates<R.State> {
        SessionStates(events: events(lastEventID: lastEventID))
    }

    /// `?select=/json/pointer`: only the selected part of the state, sent when it changes, decoded as `Value`.
    public func events<Value: Decodable & Sendable>(
        select pointer: String, as type: Value.Type, lastEventID: String = ""
    ) -> SessionEvents<Value> {
        SessionEvents(session: access, client: client, select: pointer, lastEventID: lastEventID)
    }
}

extension RemoteSession where R.Action: Encodable {
    /// `POST /sessions/{id}/actions`: queues `action` (in the server's `{"type": …}` coding); returns its `seq`.
    @discardableResult
    public func send(_ action: R.Action) async throws(ReactorClientError) -> UInt64 {
        let transport = client.transport
        let body = try await transport.json(
            transport.request("POST", ["sessions", id, "actions"], body: try Self.encode(action), bearer: credential))
        return try APIResponse.integer(body, "seq")
    }

    /// `POST /sessions/{id}/actions?wait=true`: answers once every mutation of `action` has been reduced
    /// (504 `timeout` past the server's bound).
    public func sendAndWait(_ action: R.Action) async throws(ReactorClientError) -> ActionResult<R.State> {
        let transport = client.transport
        let request = transport.request(
            "POST", ["sessions", id, "actions"], query: [("wait", "true")], body: try Self.encode(action),
            bearer: credential)
        let body = try await transport.json(request)
        return ActionResult(
            seq: try APIResponse.integer(body, "seq"),
            reduced: try VersionedState(body, as: R.State.self, "the reduced state"))
    }

    /// The action as `{"type": …}`, refusing values that do not encode as such an object.
    static func encode(_ action: R.Action) throws(ReactorClientError) -> [UInt8] {
        do {
            return try encodeAction(action)
        } catch {
            throw .encoding("\(error)")
        }
    }
}
