extension RequestParser {
    /// Checks the `Host` field (RFC 9112 §3.2): one in every HTTP/1.1 request, at most one in HTTP/1.0,
    /// a valid `uri-host [ ":" port ]` (RFC 9110 §7.2). Returns it, nil when an HTTP/1.0 request has none.
    @inline(__always)
    static func checkHost(_ fields: FieldLines, in head: UnsafeBufferPointer<UInt8>, version: HTTPVersion)
        throws(HTTPRejection) -> HostPort?
    {
        if fields.hostCount == 0 {
            guard version.minor == 0 else {
                throw HTTPRejection(.missingHost, "an HTTP/1.1 request needs a Host header")
            }
            return nil
        }
        if fields.hostCount > 1 {
            throw HTTPRejection(.invalidHost, "more than one Host header")
        }
        guard let host = HostPort(UnsafeBufferPointer(rebasing: head[fields.host])) else {
            throw HTTPRejection(.invalidHost, "the Host header is not a host name or address with an optional port")
        }
        return host
    }

    /// Refuses an absolute-form target whose authority is empty, carries user information, is not a
    /// host with an optional port, or names another host or port than the `Host` field (whose bytes
    /// are `hostBytes`).
    ///
    /// RFC 9112 §3.2.2 lets an origin server ignore `Host` when the target is absolute; this server
    /// refuses the disagreement instead (as HAProxy does): a proxy in front may have routed by one
    /// while the application would act on the other.
    static func checkAuthority(of target: String, agreesWith host: HostPort, _ hostBytes: UnsafeBufferPointer<UInt8>)
        throws(HTTPRejection)
    {
        var target = target
        let rejection = target.withUTF8 { bytes -> HTTPRejection? in
            // The request line let only `http://` and `https://` through, in any case.
            let https = bytes[4] == UInt8(ascii: "s") || bytes[4] == UInt8(ascii: "S")
            let start = https ? 8 : 7
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"),
                bytes[end] != UInt8(ascii: "#")
            { end += 1 }
            let authority = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if authority.contains(UInt8(ascii: "@")) {
                return HTTPRejection(.malformedRequestLine, "the request target carries user information")
            }
            guard !authority.isEmpty, let named = HostPort(authority) else {
                return HTTPRejection(
                    .malformedRequestLine,
                    "the request target's authority is not a host name or address with an optional port")
            }
            let defaultPort = https ? 443 : 80
            let agrees =
                (named.port ?? defaultPort) == (host.port ?? defaultPort)
                && HTTPHeaders.sameBytes(
                    UnsafeBufferPointer(rebasing: authority[named.host]),
                    UnsafeBufferPointer(rebasing: hostBytes[host.host]))
            return agrees
                ? nil : HTTPRejection(.invalidHost, "the Host header names another authority than the request target")
        }
        if let rejection { throw rejection }
    }
}

/// A `uri-host [ ":" port ]` (RFC 3986 §3.2.2-3): where the host lies in the bytes, and the port.
struct HostPort {
    var host: Range<Int>
    /// The port, nil when none (or an empty one) is given.
    var port: Int?

    /// Parses `bytes`, or nil when they are not a host (a registered name, IPv4 address or
    /// bracketed IP literal) with an optional port of at most 65535. An empty host is valid.
    @inline(__always)
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else {
            host = 0..<0
            port = nil
            return
        }
        var index = 0
        if base[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return nil }
            // IPv6 (hex digits, colons, dots for an embedded IPv4) or IPvFuture (`v…`).
            let future = base[1] == UInt8(ascii: "v") || base[1] == UInt8(ascii: "V")
            for byte in bytes[1..<close] {
                let allowed =
                    future
                    ? (byte.isRegisteredNameCharacter || byte == .colon)
                    : (PercentDecoding.hexValue(byte) != nil || byte == .colon || byte == UInt8(ascii: "."))
                guard allowed else { return nil }
            }
            index = close + 1
        } else {
            // One mask test per byte; `%` escapes and the colon before a port are the exceptions.
            while index < count {
                while index < count && base[index].isRegisteredNameCharacter { index &+= 1 }
                guard index < count, base[index] != .colon else { break }
                guard base[index] == UInt8(ascii: "%"), index + 2 < count,
                    PercentDecoding.hexValue(base[index + 1]) != nil, PercentDecoding.hexValue(base[index + 2]) != nil
                else {
                    return nil
                }
                index += 3
            }
        }
        host = 0..<index
        port = nil
        guard index < count else { return }
        guard base[index] == .colon, count - index - 1 <= 5 else { return nil }
        var value = 0
        index += 1
        if index == count { return }
        // At most five digits: the arithmetic cannot overflow.
        while index < count {
            let digit = base[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int(digit)
            index &+= 1
        }
        guard value <= 65535 else { return nil }
        port = value
    }
}
