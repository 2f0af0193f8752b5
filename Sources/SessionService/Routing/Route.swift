/// Every endpoint the service answers, by name. ``Route/table`` (`Routes/RouteTable.swift`) declares each one
/// once — method, path, who may call it, what it needs, what it takes and answers, and its responder; the
/// router, the middleware chains, metrics labels, the README and `/openapi.json` are built from it.
public enum Route: Int, Sendable, CaseIterable {
    case page, favicon, health, metrics, openAPI, reactors
    case createSession, getSession, deleteSession, postAction, events, multiplexedEvents
    case adminConsole, adminSessions, adminActions, adminStub, adminState, adminVersion, adminFork, adminSessionToken
    case adminRelease, adminTimers, adminCancelTimer

    enum Segment: Sendable, Equatable {
        case literal([UInt8])
        case parameter
    }

    /// The route's position in `allCases` and in ``Route/table`` (its chain and its metrics row), without
    /// hashing: the cases are numbered in order.
    var index: Int { rawValue }

    /// Its name, as the case is spelled: the `operationId` of its operation in `/openapi.json`.
    public var name: String { Self.names[rawValue] }

    static let names = allCases.map { String(describing: $0) }

    /// Who may call the route.
    public var access: RouteAccess { Self.accesses[self] ?? .admin }

    static let accesses: [Route: RouteAccess] = Dictionary(
        table.map { ($0.route, $0.access) }, uniquingKeysWith: { first, _ in first })

    /// The label used for this route in metrics and access logs: its pattern.
    public var label: String { Self.labels[self] ?? name }

    static let labels: [Route: String] = Dictionary(
        table.map { ($0.route, "\($0.method) \($0.pattern)") }, uniquingKeysWith: { first, _ in first })
}
