import HTTPServer

/// Who a request comes from, for per-client limits: the connection's peer, or — when the peer is a
/// configured trusted proxy — the nearest address in `X-Forwarded-For` that is not itself a trusted
/// proxy (read from the right, since a client can write anything on the left).
struct ClientAddressResolver: Sendable {
    let trustedProxies: [IPNetwork]

    /// The client of `request`; nil when the peer is unknown (in-process requests).
    func client(of request: HTTPRequest) -> IPAddress? {
        // The number the server read from the socket; the text of a request built by hand otherwise.
        guard let peer = request.peerIP ?? request.peer.flatMap({ IPAddress($0.host) }) else { return nil }
        guard !trustedProxies.isEmpty, trustedProxies.contains(peer) else { return peer }
        var client = peer
        for field in request.headers.values("X-Forwarded-For").reversed() {
            for entry in field.split(separator: ",").reversed() {
                guard let hop = IPAddress(Self.stripPort(entry.trimmingSpaces)) else { return client }
                client = hop
                if !trustedProxies.contains(hop) { return hop }
            }
        }
        return client
    }

    /// `203.0.113.7:5000` → `203.0.113.7`; `[2001:db8::1]:443` → `[2001:db8::1]`; IPv6 without brackets as is.
    static func stripPort(_ entry: Substring) -> Substring {
        if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") { return entry[...close] }
        if entry.filter({ $0 == ":" }).count == 1, let colon = entry.firstIndex(of: ":") { return entry[..<colon] }
        return entry
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var slice = self
        while slice.first == " " || slice.first == "\t" { slice.removeFirst() }
        while slice.last == " " || slice.last == "\t" { slice.removeLast() }
        return slice
    }
}
