import Foundation
import JSONCodec
import Reactors

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A typed client of one reactor-server: sessions of your own reactor types, their actions and live states,
/// several sessions over one stream, and the admin API.
///
/// The reactor type is the one the server hosts (share it in a package both depend on): actions go out in the
/// server's `{"type": "<case>", …}` coding and states come back decoded into its `State`.
///
/// ```swift
/// let client = ReactorClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
/// let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self)
/// try await counter.send(.increase)
/// let reduced = try await counter.sendAndWait(.increase)      // {seq, version, state} once reduced
/// for try await update in counter.states() {                  // the current state, then every new one
///     print(update.version, update.state.value)
/// }
/// ```
/// Every value is `Sendable`; calls may be made from any task. Credentials: `bearerToken` (a JWT, in the
/// server's `jwt` mode) goes with every session request; a session's own token (`token` mode, returned by
/// ``createSession(reactor:as:id:)``) takes its place for that session.
public struct ReactorClient: Sendable {
    /// The server's address, e.g. `http://127.0.0.1:8080` (a path prefix such as `https://host/api` is kept).
    public let baseURL: URL
    /// A JWT sent as `Authorization: Bearer` with every session request that has no token of its own.
    public var bearerToken: String?
    /// Timeouts, reconnection and limits.
    public var configuration: Configuration

    /// A client of the server at `baseURL`.
    public init(baseURL: URL, bearerToken: String? = nil, configuration: Configuration = Configuration()) {
        self.baseURL = baseURL
        self.bearerToken = bearerToken
        self.configuration = configuration
    }

    var transport: HTTPTransport { HTTPTransport(baseURL: baseURL, configuration: configuration) }

    /// `GET /reactors`: the reactor types the server hosts.
    public func reactors() async throws(ReactorClientError) -> [ReactorDescription] {
        let body = try await transport.json(transport.request("GET", ["reactors"], bearer: bearerToken))
        guard let list = try APIResponse.member(body, "reactors").arrayValue else {
            throw .invalidResponse("\"reactors\" is not a list")
        }
        var reactors: [ReactorDescription] = []
        for entry in list {
            reactors.append(
                ReactorDescription(
                    name: try APIResponse.string(entry, "name"),
                    initialState: try APIResponse.member(entry, "initialState"), json: entry))
        }
        return reactors
    }

    /// `POST /sessions`: a new session of the reactor the server hosts as `name`, decoded as `R`; `id` chooses
    /// its id (`[A-Za-z0-9_-]{1,64}`), else the server picks one. In `token` mode the handle holds its token.
    public func createSession<R: Reactor>(reactor name: String, as type: R.Type = R.self, id: String? = nil)
        async throws(ReactorClientError) -> RemoteSession<R>
    {
        try await createSession(reactor: name, as: type, id: id, paramsJSON: nil)
    }

    /// `POST /sessions` with `"params"`: a session of a reactor that takes parameters (the `profile` example's
    /// `ProfileReactor.Params(userID: 7)`), encoded as JSON. Parameters the server's reactor does not decode
    /// fail with `.server(status: 422, code: .invalidParams, …)`, whose message names the field.
    ///
    /// ```swift
    /// let profile = try await client.createSession(
    ///     reactor: "profile", as: ProfileReactor.self, params: ProfileReactor.Params(userID: 7))
    /// ```
    public func createSession<R: Reactor, P: Encodable>(
        reactor name: String, as type: R.Type = R.self, id: String? = nil, params: P
    ) async throws(ReactorClientError) -> RemoteSession<R> {
        let json: JSONValue
        do {
            json = try JSONValueEncoder().encodeValue(params)
        } catch {
            throw .encoding("the params do not encode as JSON: \(error)")
        }
        return try await createSession(reactor: name, as: type, id: id, paramsJSON: json)
    }

    /// `POST /sessions` with the body's members.
    func createSession<R: Reactor>(
        reactor name: String, as type: R.Type, id: String?, paramsJSON: JSONValue?
    ) async throws(ReactorClientError) -> RemoteSession<R> {
        var members: [(String, JSONValue)] = [("reactor", .string(name))]
        if let id { members.append(("id", .string(id))) }
        if let paramsJSON { members.append(("params", paramsJSON)) }
        let body = JSONValue.object(JSONObject(members))
        let created = try await transport.json(
            transport.request("POST", ["sessions"], body: body.serialized(), bearer: bearerToken))
        return try RemoteSession(client: self, created: created)
    }

    /// A handle on an existing session (no request is made); `token` is its capability token in `token` mode.
    public func session<R: Reactor>(_ id: String, as type: R.Type = R.self, token: String? = nil) -> RemoteSession<R> {
        RemoteSession(client: self, id: id, token: token)
    }

    /// `GET /events?sessions=a,b,c`: the events of several sessions over one connection, reconnecting with
    /// its cursor. See ``MultiplexedEvents``.
    public func events(for sessions: [SessionAccess], select: String? = nil) -> MultiplexedEvents {
        MultiplexedEvents(client: self, sessions: sessions, select: select)
    }

    /// The credential for session requests: the session's token, else the client's bearer token.
    func credential(token: String?) -> String? {
        token ?? bearerToken
    }
}

/// A reactor type the server hosts, from `GET /reactors`.
public struct ReactorDescription: Sendable, Hashable {
    /// The name sessions are created with.
    public var name: String
    /// The state of a new session.
    public var initialState: JSONValue
    /// The whole entry (description, example actions, and whatever later servers add).
    public var json: JSONValue
}

/// One session of a multiplexed stream: its id and, in `token` mode, its token.
public struct SessionAccess: Sendable, Hashable {
    /// The session's id.
    public var id: String
    /// Its capability token, when the server runs in `token` mode.
    public var token: String?

    /// Access to session `id`, with `token` when the server requires one.
    public init(id: String, token: String? = nil) {
        self.id = id
        self.token = token
    }
}
