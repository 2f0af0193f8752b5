#if canImport(Glibc)
    import Glibc
#endif

/// A parsed request, body included. Path, segments and query are derived from `target` on access.
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The HTTP version the client spoke.
    public var version: HTTPVersion
    /// The request target as sent (origin-form `/a/b?c=d`, or absolute-form `http://host/a`). A parsed request
    /// keeps it as bytes and makes the `String` on each read: the hot paths read it through ``withTargetBytes(_:)``.
    public var target: String {
        get { storedTarget.text }
        set { storedTarget = Target(text: newValue) }
    }
    @usableFromInline var storedTarget: Target
    /// Header fields in order.
    public var headers: HTTPHeaders
    /// The body bytes (de-chunked for requests).
    public var body: [UInt8]
    /// The client's address, when known.
    public var peer: SocketAddress? {
        get { hasPeer ? peerAddress : nil }
        set {
            hasPeer = newValue != nil
            peerAddress = newValue ?? SocketAddress(host: "", port: 0)
            peerNumber = nil
        }
    }
    /// The client's address as a number, when the server read it from the socket (nil for requests
    /// built by hand): per-client limits need not parse `peer`'s text on every request.
    public var peerIP: IPAddress? { hasPeer ? peerNumber : nil }
    private var peerNumber: IPAddress?
    // Stored without an Optional: with an optional field the compiler built every request in a
    // temporary and copied it out (an outlined copy and destroy of the whole struct, ~350
    // instructions per parsed request).
    private var peerAddress: SocketAddress
    private var hasPeer: Bool
    /// Whether the connection stays open after the response (HTTP/1.1 default, HTTP/1.0 on request).
    public var keepAlive: Bool

    /// A request built by hand (tests, in-process callers).
    public init(
        method: HTTPMethod, version: HTTPVersion = .http1_1, target: String, headers: HTTPHeaders = [:],
        body: [UInt8] = [], peer: SocketAddress? = nil, keepAlive: Bool = true
    ) {
        self.method = method
        self.version = version
        self.storedTarget = Target(text: target)
        self.headers = headers
        self.body = body
        self.hasPeer = peer != nil
        self.peerAddress = peer ?? SocketAddress(host: "", port: 0)
        self.keepAlive = keepAlive
    }

    /// A parsed request, its target as the parser kept it.
    init(
        method: HTTPMethod, version: HTTPVersion, target: Target, headers: HTTPHeaders, body: [UInt8] = [],
        keepAlive: Bool
    ) {
        self.method = method
        self.version = version
        self.storedTarget = target
        self.headers = headers
        self.body = body
        self.hasPeer = false
        self.peerAddress = SocketAddress(host: "", port: 0)
        self.keepAlive = keepAlive
    }

    /// Calls `body` with the target's bytes (valid for the call only): no `String` is made for a parsed request.
    @inlinable
    public func withTargetBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try storedTarget.withBytes(body)
    }

    /// Sets the client's address, text and number together (the server, for a request it parsed).
    mutating func setPeer(_ peer: SocketAddress?, ip: IPAddress?) {
        self.peer = peer
        peerNumber = ip
    }

    /// The path part of the target, still percent-encoded (`/sessions/a%20b`); absolute-form
    /// targets lose their scheme and authority.
    public var path: String {
        // Origin-form without a query (most requests): the target is the path.
        if target.utf8.first == UInt8(ascii: "/") && !targetContains(UInt8(ascii: "?")) { return target }
        return String(pathBytes)
    }

    /// The path as a slice of `target` (scanned as bytes: `Character`-based searching of a `String`
    /// does grapheme breaking and costs several times more on every request).
    var pathBytes: Substring {
        let utf8 = target.utf8
        var start = utf8.startIndex
        if let first = utf8.first, first != UInt8(ascii: "/"), let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            // absolute-form: drop "scheme://authority"
            let authority = utf8.index(colon, offsetBy: 3, limitedBy: utf8.endIndex) ?? utf8.endIndex
            guard let slash = utf8[authority...].firstIndex(of: UInt8(ascii: "/")) else { return "/" }
            start = slash
        }
        let end =
            utf8[start...].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? utf8.endIndex
        return target[start..<end]
    }

    /// The path split at `/`, each segment percent-decoded; empty segments are dropped (`/a//b/` → `["a", "b"]`).
    public var pathSegments: [String] {
        let path = pathBytes
        var segments: [String] = []
        var segmentStart = path.utf8.startIndex
        var index = segmentStart
        let end = path.utf8.endIndex
        while true {
            if index == end || path.utf8[index] == UInt8(ascii: "/") {
                if segmentStart != index {
                    segments.append(PercentDecoding.decode(path[segmentStart..<index], plusIsSpace: false))
                }
                if index == end { break }
                segmentStart = path.utf8.index(after: index)
            }
            index = path.utf8.index(after: index)
        }
        return segments
    }

    /// The query string's name/value pairs, percent-decoded (`+` is a space), in order.
    public var query: [(String, String)] {
        let utf8 = target.utf8
        guard let question = utf8.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        let start = utf8.index(after: question)
        let end = utf8[start...].firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        var pairs: [(String, String)] = []
        var pairStart = start
        var index = start
        while true {
            if index == end || utf8[index] == UInt8(ascii: "&") {
                if pairStart != index {
                    let pair = target[pairStart..<index]
                    if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                        pairs.append(
                            (
                                PercentDecoding.decode(pair[..<equals], plusIsSpace: true),
                                PercentDecoding.decode(pair[pair.utf8.index(after: equals)...], plusIsSpace: true)
                            ))
                    } else {
                        pairs.append((PercentDecoding.decode(pair, plusIsSpace: true), ""))
                    }
                }
                if index == end { break }
                pairStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        return pairs
    }

    /// The first query value named `name`, or nil.
    public func queryValue(_ name: String) -> String? {
        guard targetContains(UInt8(ascii: "?")) else { return nil }
        return query.first(where: { $0.0 == name })?.1
    }

    /// Every query value named `name`, in order (empty when it is not given): for parameters that must not be
    /// given twice with different values.
    public func queryValues(_ name: String) -> [String] {
        guard targetContains(UInt8(ascii: "?")) else { return [] }
        return query.compactMap { $0.0 == name ? $0.1 : nil }
    }

    /// Whether the target holds `byte`, searched over contiguous bytes (the generic search of a
    /// `UTF8View` costs several hundred instructions for a short target, on every request).
    func targetContains(_ byte: UInt8) -> Bool {
        // memchr: a byte loop over the buffer cost ~150 instructions for a 20-byte target.
        withTargetBytes { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, Int32(byte), bytes.count) != nil
        }
    }
}

extension HTTPRequest {
    /// Where a request's target is: its own text (built by hand, or set), or the last `count` bytes of the
    /// array a parsed head's fields are kept in (shared with ``HTTPRequest/headers``: one allocation fewer per
    /// request, and no `String` made unless `target` is read).
    @usableFromInline
    struct Target: Sendable {
        /// The target when `parsed` is empty.
        @usableFromInline var ownText: String
        /// The parsed head's array, the target at its end; empty for a target given as text.
        @usableFromInline var parsed: [UInt8]
        /// How many bytes at the end of `parsed` the target takes.
        @usableFromInline var count: Int

        /// A target given as text.
        init(text: String) {
            ownText = text
            parsed = []
            count = 0
        }

        /// The last `count` bytes of `array` (never empty: a target has at least one byte).
        init(parsedIn array: [UInt8], count: Int) {
            ownText = ""
            parsed = array
            self.count = count
        }

        /// The target as text (made from the bytes each time, for a parsed one).
        var text: String {
            if parsed.isEmpty { return ownText }
            return withBytes { String(decoding: $0, as: UTF8.self) }
        }

        /// Calls `body` with the target's bytes.
        @inlinable
        func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            if parsed.isEmpty {
                var text = ownText
                return try text.withUTF8(body)
            }
            return try parsed.withUnsafeBufferPointer { all in
                try body(UnsafeBufferPointer(rebasing: all[(all.count - count)...]))
            }
        }
    }
}

/// Percent-decoding of URL components (RFC 3986 §2.1); malformed escapes are kept literally.
public enum PercentDecoding {
    /// Decodes a path segment, query name or value (`+` is a space when `plusIsSpace`).
    public static func decode(_ text: Substring, plusIsSpace: Bool) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(text)
        }
        return decode(bytes: utf8, plusIsSpace: plusIsSpace)
    }

    /// Decodes bytes (a router's view of the target) into a string.
    public static func decode(bytes: some Collection<UInt8>, plusIsSpace: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"),
                let high = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex), high != bytes.endIndex,
                let low = bytes.index(index, offsetBy: 2, limitedBy: bytes.endIndex), low != bytes.endIndex,
                let h = hexValue(bytes[high]), let l = hexValue(bytes[low])
            {
                out.append(h << 4 | l)
                index = bytes.index(after: low)
                continue
            }
            out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index = bytes.index(after: index)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
