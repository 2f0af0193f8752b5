/// A request method: any token (RFC 9110 §9), compared case-sensitively (`get` is not `GET`).
///
/// The parser accepts every method but `CONNECT` (this server is no tunnel): which methods a path
/// serves is the responder's to say, with `405` and `Allow`, or `501` for a method it serves nowhere.
///
/// ```swift
/// if request.method == .HEAD { … }
/// HTTPMethod(rawValue: "QUERY")  // a method this module has no name for works the same
/// ```
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The method as written on the request line.
    public let rawValue: String
    /// A number for each method named below, 0 for any other: two named methods compare in one
    /// byte compare (a `String` comparison cost ~20 instructions, made on every request).
    private let tag: UInt8

    /// The method spelled `rawValue` (the parser only makes tokens).
    public init(rawValue: String) {
        self.rawValue = rawValue
        tag = Self.names.firstIndex(of: rawValue).map { UInt8($0 + 1) } ?? 0
    }

    private init(_ rawValue: String, tag: UInt8) {
        self.rawValue = rawValue
        self.tag = tag
    }

    /// The named methods, in tag order.
    private static let names = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"]

    // Computed, not stored: a static stored property is reached through a lazy-initialisation
    // check on every use, and these are compared on every request.
    /// `GET`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var GET: HTTPMethod { HTTPMethod("GET", tag: 1) }
    /// `HEAD`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var HEAD: HTTPMethod { HTTPMethod("HEAD", tag: 2) }
    /// `POST`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var POST: HTTPMethod { HTTPMethod("POST", tag: 3) }
    /// `PUT`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var PUT: HTTPMethod { HTTPMethod("PUT", tag: 4) }
    /// `DELETE`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var DELETE: HTTPMethod { HTTPMethod("DELETE", tag: 5) }
    /// `PATCH`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var PATCH: HTTPMethod { HTTPMethod("PATCH", tag: 6) }
    /// `OPTIONS`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var OPTIONS: HTTPMethod { HTTPMethod("OPTIONS", tag: 7) }
    /// `TRACE`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var TRACE: HTTPMethod { HTTPMethod("TRACE", tag: 8) }
    /// `CONNECT` (refused by the parser: no tunnels).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static var CONNECT: HTTPMethod { HTTPMethod("CONNECT", tag: 9) }

    /// Same method (case-sensitive).
    @inline(__always)
    public static func == (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool {
        lhs.tag == rhs.tag && (lhs.tag != 0 || lhs.rawValue == rhs.rawValue)
    }

    /// Hashes the spelling.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue)
    }

    /// `GET`.
    public var description: String { rawValue }

    /// The method spelled by `bytes`, a token.
    init(bytes: UnsafeBufferPointer<UInt8>) {
        // The usual methods as literals: no String is built from the bytes.
        switch bytes.count {
        case 3:
            if bytes.equals("GET") {
                self = .GET
                return
            }
            if bytes.equals("PUT") {
                self = .PUT
                return
            }
        case 4:
            if bytes.equals("POST") {
                self = .POST
                return
            }
            if bytes.equals("HEAD") {
                self = .HEAD
                return
            }
        case 6:
            if bytes.equals("DELETE") {
                self = .DELETE
                return
            }
        default:
            break
        }
        self.init(rawValue: String(decoding: bytes, as: UTF8.self))
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
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }
}
