/// Every endpoint the service answers. ``Route/table`` declares each one once — method, path and who
/// may call it; the router, the middleware chains, metrics labels and the README are built from it, a
/// test checks `/openapi.json` against it, and the service's exhaustive `switch` over the cases makes
/// every route have a responder.
public enum Route: String, Sendable, CaseIterable {
    case page, favicon, health, metrics, openAPI, reactors
    case createSession, getSession, deleteSession, postAction, events, multiplexedEvents
    case adminConsole, adminSessions, adminActions, adminStub, adminState, adminVersion, adminFork, adminSessionToken

    /// One row of the routing table: method, path pattern (`{id}` is a parameter), route, access.
    public struct Entry: Sendable {
        public let method: String
        public let pattern: String
        public let route: Route
        public let access: RouteAccess
        let segments: [Segment]

        init(_ method: String, _ pattern: String, _ route: Route, _ access: RouteAccess) {
            self.method = method
            self.pattern = pattern
            self.route = route
            self.access = access
            segments = pattern.split(separator: "/").map { part in
                part.hasPrefix("{") ? .parameter : .literal(Array(part.utf8))
            }
        }
    }

    enum Segment: Sendable, Equatable {
        case literal([UInt8])
        case parameter
    }

    /// The routing table, in the order the README and `/openapi.json` list it.
    public static let table: [Entry] = [
        Entry("GET", "/", .page, .open),
        Entry("GET", "/favicon.ico", .favicon, .open),
        Entry("GET", "/healthz", .health, .open),
        Entry("GET", "/metrics", .metrics, .open),
        Entry("GET", "/openapi.json", .openAPI, .open),
        Entry("GET", "/reactors", .reactors, .open),
        Entry("POST", "/sessions", .createSession, .createSession),
        Entry("GET", "/sessions/{id}", .getSession, .session(.read)),
        Entry("DELETE", "/sessions/{id}", .deleteSession, .session(.delete)),
        Entry("POST", "/sessions/{id}/actions", .postAction, .session(.act)),
        Entry("GET", "/sessions/{id}/events", .events, .session(.read)),
        // One stream, many sessions: the route checks each session of `sessions=` (its part ends if refused).
        Entry("GET", "/events", .multiplexedEvents, .eachSession(.read)),
        // The console page holds no secret: the operator types the admin token into it.
        Entry("GET", "/admin/console", .adminConsole, .open),
        Entry("GET", "/admin/sessions", .adminSessions, .admin),
        Entry("GET", "/admin/sessions/{id}/actions", .adminActions, .admin),
        Entry("PUT", "/admin/sessions/{id}/stub", .adminStub, .admin),
        Entry("PUT", "/admin/sessions/{id}/state", .adminState, .admin),
        Entry("GET", "/admin/sessions/{id}/versions/{version}", .adminVersion, .admin),
        Entry("POST", "/admin/sessions/{id}/fork", .adminFork, .admin),
        Entry("POST", "/admin/sessions/{id}/token", .adminSessionToken, .admin),
    ]

    /// Who may call the route.
    public var access: RouteAccess { Self.accesses[self] ?? .admin }

    static let accesses: [Route: RouteAccess] = Dictionary(table.map { ($0.route, $0.access) }, uniquingKeysWith: { a, _ in a })

    /// The route's position in `allCases` (its chain and its metrics row), without hashing.
    var index: Int {
        switch self {
        case .page: 0
        case .favicon: 1
        case .health: 2
        case .metrics: 3
        case .openAPI: 4
        case .reactors: 5
        case .createSession: 6
        case .getSession: 7
        case .deleteSession: 8
        case .postAction: 9
        case .events: 10
        case .multiplexedEvents: 11
        case .adminConsole: 12
        case .adminSessions: 13
        case .adminActions: 14
        case .adminStub: 15
        case .adminState: 16
        case .adminVersion: 17
        case .adminFork: 18
        case .adminSessionToken: 19
        }
    }

    /// The label used for this route in metrics and access logs: its pattern.
    public var label: String { Self.labels[self] ?? rawValue }

    static let labels: [Route: String] = Dictionary(table.map { ($0.route, "\($0.method) \($0.pattern)") }, uniquingKeysWith: { a, _ in a })
}
