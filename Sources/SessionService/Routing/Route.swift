/// Every endpoint the service answers. The router's table and `/openapi.json` are both built from
/// ``Route/table``, so a route cannot exist without being documented (a test checks the document).
public enum Route: String, Sendable, CaseIterable {
    case page, health, metrics, openAPI, reactors
    case createSession, getSession, deleteSession, postAction, events
    case adminSessions, adminActions, adminStub, adminState, adminVersion, adminFork

    /// One row of the routing table: method, path pattern (`{id}` is a parameter), route.
    public struct Entry: Sendable {
        public let method: String
        public let pattern: String
        public let route: Route
        let segments: [Segment]

        init(_ method: String, _ pattern: String, _ route: Route) {
            self.method = method
            self.pattern = pattern
            self.route = route
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
        Entry("GET", "/", .page),
        Entry("GET", "/healthz", .health),
        Entry("GET", "/metrics", .metrics),
        Entry("GET", "/openapi.json", .openAPI),
        Entry("GET", "/reactors", .reactors),
        Entry("POST", "/sessions", .createSession),
        Entry("GET", "/sessions/{id}", .getSession),
        Entry("DELETE", "/sessions/{id}", .deleteSession),
        Entry("POST", "/sessions/{id}/actions", .postAction),
        Entry("GET", "/sessions/{id}/events", .events),
        Entry("GET", "/admin/sessions", .adminSessions),
        Entry("GET", "/admin/sessions/{id}/actions", .adminActions),
        Entry("PUT", "/admin/sessions/{id}/stub", .adminStub),
        Entry("PUT", "/admin/sessions/{id}/state", .adminState),
        Entry("GET", "/admin/sessions/{id}/versions/{version}", .adminVersion),
        Entry("POST", "/admin/sessions/{id}/fork", .adminFork),
    ]

    /// Whether the route needs the admin bearer token.
    public var isAdmin: Bool {
        switch self {
        case .adminSessions, .adminActions, .adminStub, .adminState, .adminVersion, .adminFork: true
        default: false
        }
    }

    /// The label used for this route in metrics and access logs: its pattern.
    public var label: String { Self.labels[self] ?? rawValue }

    static let labels: [Route: String] = Dictionary(table.map { ($0.route, "\($0.method) \($0.pattern)") }, uniquingKeysWith: { a, _ in a })
}
