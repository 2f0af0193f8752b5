import JSONCodec
import Reactors

/// The admin API (`Authorization: Bearer <admin token>`): every session, and per session stub mode, forced
/// states, the action log, time travel, forks and token replacement.
///
/// ```swift
/// let admin = client.admin(token: ProcessInfo.processInfo.environment["REACTOR_ADMIN_TOKEN"]!)
/// for summary in try await admin.sessions() { print(summary.id, summary.version, summary.subscribers) }
/// let demo = admin.session("demo", as: CounterReactor.self)
/// try await demo.setStub(true)
/// try await demo.forceState(.init(value: 100))
/// let log = try await demo.actions(since: 2)
/// let then = try await demo.state(atVersion: 1)
/// let branch = try await demo.fork(atVersion: 1, id: "demo-branch")    // a RemoteSession<CounterReactor>
/// ```
public struct ReactorAdmin: Sendable {
    /// The client whose server this administers.
    public let client: ReactorClient
    let token: String

    /// `GET /admin/sessions`: every session, in memory or only on disk.
    public func sessions() async throws(ReactorClientError) -> [AdminSessionSummary] {
        let transport = client.transport
        let body = try await transport.json(transport.request("GET", ["admin", "sessions"], bearer: token))
        guard let list = try APIResponse.member(body, "sessions").arrayValue else {
            throw .invalidResponse("\"sessions\" is not a list")
        }
        var summaries: [AdminSessionSummary] = []
        for entry in list { summaries.append(try AdminSessionSummary(entry)) }
        return summaries
    }

    /// The admin calls of session `id`, typed by its reactor.
    public func session<R: Reactor>(_ id: String, as type: R.Type = R.self) -> AdminSession<R> {
        AdminSession(admin: self, id: id)
    }

    /// The admin calls of the session `session` addresses.
    public func session<R: Reactor>(for session: RemoteSession<R>) -> AdminSession<R> {
        AdminSession(admin: self, id: session.id)
    }

    /// An authorized request to `/admin/…`, parsed.
    func json(_ method: String, _ segments: [String], query: [(String, String)] = [], body: [UInt8]? = nil)
        async throws(ReactorClientError) -> JSONValue
    {
        let transport = client.transport
        return try await transport.json(
            transport.request(method, ["admin"] + segments, query: query, body: body, bearer: token))
    }
}

/// One entry of the admin session listing.
public struct AdminSessionSummary: Sendable, Hashable {
    /// The session's id.
    public var id: String
    /// The name of its reactor type.
    public var reactor: String
    /// Its current version.
    public var version: UInt64
    /// How many event streams follow it.
    public var subscribers: Int
    /// Whether stub mode is on.
    public var stub: Bool
    /// False when it is only on disk (it loads back on its next request).
    public var resident: Bool
    /// Why it cannot be served (corrupt history, reactor gone), nil when it can.
    public var unavailable: String?
    /// The whole entry (subscriber details, idle time, and whatever later servers add).
    public var json: JSONValue

    init(_ entry: JSONValue) throws(ReactorClientError) {
        id = try APIResponse.string(entry, "id")
        reactor = try APIResponse.string(entry, "reactor")
        version = try APIResponse.integer(entry, "version")
        subscribers = Int(try APIResponse.integer(entry, "subscribers"))
        stub = try APIResponse.bool(entry, "stub")
        resident = entry["resident"]?.boolValue ?? true
        unavailable = entry["unavailable"]?.stringValue
        json = entry
    }
}

extension ReactorClient {
    /// The admin API, authorized by the server's admin token.
    public func admin(token: String) -> ReactorAdmin {
        ReactorAdmin(client: self, token: token)
    }
}
