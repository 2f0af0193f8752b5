import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Matches a request's method and path against ``Route/table``, on the target's bytes: it runs on
/// every request, so it neither splits into `String`s nor decodes segments other than the id.
public struct Router: Sendable {
    /// What a path and method resolve to.
    public enum Match: Sendable, Equatable {
        /// A route, with the `{id}` parameter (percent-decoded) when the pattern has one.
        case route(Route, id: String?)
        /// The path exists but not for this method (any token: `QUERY`, `PATCH`, `BREW`); `allowed`
        /// goes into the `Allow` header (RFC 9110 §15.5.6).
        case methodNotAllowed(allowed: [String])
        /// No route has this path.
        case notFound
        /// No route has this path, and none serves this method on any path (RFC 9110 §15.6.2: 501).
        case notImplemented
    }

    public init() {}

    /// Resolves a request target (`/sessions/abc/actions?wait=true`); `HEAD` matches `GET` routes.
    public func match(method: String, target: String) -> Match {
        var target = target
        return target.withUTF8 { match(method: method, targetBytes: $0) }
    }

    /// Resolves a request's target from its bytes (`HTTPRequest.withTargetBytes(_:)`: no `String` made).
    public func match(method: String, targetBytes bytes: UnsafeBufferPointer<UInt8>) -> Match {
        // Origin-form (every usual request): the hot routes are read from the target in one pass.
        if bytes.first == UInt8(ascii: "/"), let hot = Self.hotRoute(method: method, target: bytes) { return hot }
        let path = Self.path(of: bytes)
        var allowed: [String] = []
        for entry in Route.table {
            guard let id = Self.matches(entry.segments, path) else { continue }
            if entry.method == method || (method == "HEAD" && entry.method == "GET") {
                return .route(entry.route, id: id.map { Self.decode(path[$0]) })
            }
            allowed.append(entry.method)
        }
        if allowed.isEmpty { return Self.servedMethods.contains(method) ? .notFound : .notImplemented }
        if allowed.contains("GET") { allowed.append("HEAD") }
        allowed.append("OPTIONS")
        return .methodNotAllowed(allowed: allowed)
    }

    /// Every method some route serves, with `HEAD` (of `GET` routes) and `OPTIONS` (preflight).
    static let servedMethods = Set(Route.table.map(\.method) + ["HEAD", "OPTIONS"])

    /// The session routes nearly every request takes (`/sessions/{id}` and `/sessions/{id}/actions|events`),
    /// matched without walking the table (whose entries cost reference counting per request), from an
    /// origin-form `target` in one pass over its raw bytes up to `?` or `#` (finding the path first, then
    /// indexing it as a checked slice, cost ~800 instructions for a 20-byte path).
    static func hotRoute(method: String, target: UnsafeBufferPointer<UInt8>) -> Match? {
        guard let base = target.baseAddress else { return nil }
        var ranges: (Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0)
        var count = 0
        var index = 0
        let endIndex = target.count
        // Segments up to the query or fragment, whichever comes first.
        segments: while index < endIndex {
            while base[index] == UInt8(ascii: "/") {
                index += 1
                if index == endIndex { break segments }
            }
            var end = index
            while end < endIndex {
                let byte = base[end]
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
                end += 1
            }
            if end > index {
                switch count {
                case 0: ranges.0 = index..<end
                case 1: ranges.1 = index..<end
                case 2: ranges.2 = index..<end
                default: return nil
                }
                count += 1
            }
            index = end
            if index < endIndex, base[index] != UInt8(ascii: "/") { break }
        }
        guard count >= 2, equals(base, ranges.0, "sessions") else { return nil }
        let route: Route
        switch (count, method) {
        case (2, "GET"), (2, "HEAD"): route = .getSession
        case (2, "DELETE"): route = .deleteSession
        case (3, "POST") where equals(base, ranges.2, "actions"): route = .postAction
        case (3, "GET") where equals(base, ranges.2, "events"), (3, "HEAD") where equals(base, ranges.2, "events"):
            route = .events
        default: return nil
        }
        return .route(route, id: decode(target[ranges.1]))
    }

    /// Whether the bytes at `range` of `base` are `literal`.
    @inline(__always)
    static func equals(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        return memcmp(base + range.lowerBound, literal.utf8Start, range.count) == 0
    }

    /// The methods a path accepts (for CORS preflight and `OPTIONS`), empty when it does not exist.
    public func methods(for target: String) -> [String] {
        var target = target
        return target.withUTF8 { bytes in
            let path = Self.path(of: bytes)
            return Route.table.filter { Self.matches($0.segments, path) != nil }.map(\.method)
        }
    }

    /// The path of an origin-form target (absolute-form: after the authority), without query.
    static func path(of target: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var start = 0
        if target.first != UInt8(ascii: "/"), let colon = target.firstIndex(of: UInt8(ascii: ":")) {
            let authority = min(colon + 3, target.count)
            start = target[authority...].firstIndex(of: UInt8(ascii: "/")) ?? target.count
        }
        // Over the raw bytes (a slice's search checks each index).
        var end = start
        if let base = target.baseAddress {
            while end < target.count, base[end] != UInt8(ascii: "?"), base[end] != UInt8(ascii: "#") { end += 1 }
        }
        return target[start..<end]
    }

    /// Whether the path fits the pattern: `.some(range of the id segment or nil)`, or nil when not.
    static func matches(_ pattern: [Route.Segment], _ path: Slice<UnsafeBufferPointer<UInt8>>) -> Range<Int>?? {
        var id: Range<Int>?
        var index = path.startIndex
        var part = 0
        while true {
            while index < path.endIndex, path[index] == UInt8(ascii: "/") { index += 1 }  // empty segments do not count
            if index == path.endIndex { break }
            var end = index
            while end < path.endIndex, path[end] != UInt8(ascii: "/") { end += 1 }
            guard part < pattern.count else { return nil }
            switch pattern[part] {
            case .literal(let literal):
                guard literal.count == end - index else { return nil }
                for offset in 0..<literal.count where literal[offset] != path[index + offset] { return nil }
            case .parameter:
                // The first parameter is the session id; handlers read later ones from the path.
                if id == nil { id = index..<end }
            }
            part += 1
            index = end
        }
        guard part == pattern.count else { return nil }
        return .some(id)
    }

    /// Percent-decodes the id segment; most ids have no escapes and are copied as they are.
    static func decode(_ segment: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        segment.contains(UInt8(ascii: "%"))
            ? PercentDecoding.decode(bytes: segment, plusIsSpace: false) : String(decoding: segment, as: UTF8.self)
    }
}
