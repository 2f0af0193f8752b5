/// A request method this server understands; any other token (CONNECT included: no tunnels) is answered 501.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE

    /// The method spelled by `bytes` (case-sensitive, as RFC 9110 §9.1 says), or nil.
    init?(bytes: UnsafeBufferPointer<UInt8>) {
        switch bytes.count {
        case 3:
            if bytes.equals("GET") { self = .GET; return }
            if bytes.equals("PUT") { self = .PUT; return }
        case 4:
            if bytes.equals("POST") { self = .POST; return }
            if bytes.equals("HEAD") { self = .HEAD; return }
        default:
            break
        }
        guard let method = HTTPMethod(rawValue: String(decoding: bytes, as: UTF8.self)) else { return nil }
        self = method
    }
}

/// An HTTP version (`HTTP/1.1` is `major: 1, minor: 1`).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// The major version (always 1 for requests this server accepts).
    public var major: Int
    /// The minor version.
    public var minor: Int

    /// A version from its two numbers.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }
}
