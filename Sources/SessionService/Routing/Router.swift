/// Matches a request's method and decoded path segments against ``Route/table``.
public struct Router: Sendable {
    /// What a path and method resolve to.
    public enum Match: Sendable, Equatable {
        /// A route, with the `{id}` parameter when the pattern has one.
        case route(Route, id: String?)
        /// The path exists but not for this method; `allowed` goes into the `Allow` header.
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    public init() {}

    /// Resolves a request; `HEAD` matches `GET` routes.
    public func match(method: String, segments: [String]) -> Match {
        var allowed: [String] = []
        for entry in Route.table {
            guard let id = Self.matches(entry.segments, segments) else { continue }
            if entry.method == method || (method == "HEAD" && entry.method == "GET") {
                return .route(entry.route, id: id.isEmpty ? nil : id)
            }
            allowed.append(entry.method)
        }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") { allowed.append("HEAD") }
        allowed.append("OPTIONS")
        return .methodNotAllowed(allowed: allowed)
    }

    /// The methods a path accepts (for CORS preflight and `OPTIONS`), empty when it does not exist.
    public func methods(for segments: [String]) -> [String] {
        Route.table.filter { Self.matches($0.segments, segments) != nil }.map(\.method)
    }

    /// The parameter value ("" when the pattern has none), or nil when the path does not fit.
    static func matches(_ pattern: [Route.Segment], _ segments: [String]) -> String? {
        guard pattern.count == segments.count else { return nil }
        var id = ""
        for (part, segment) in zip(pattern, segments) {
            switch part {
            case .literal(let literal): if literal != segment { return nil }
            case .parameter:
                if segment.isEmpty { return nil }
                // The first parameter is the session id; handlers read later ones from the path.
                if id.isEmpty { id = segment }
            }
        }
        return id
    }
}
