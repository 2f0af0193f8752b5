/// Checks `Authorization: Bearer <token>` against the admin token in constant time.
///
/// The comparison touches every byte of the expected token whatever the input, so response time
/// does not reveal how long a matching prefix was. (The expected token's length can still be
/// inferred; tokens are random, so that gives nothing away.)
public struct AdminAuthenticator: Sendable {
    private let expected: [UInt8]

    public init(token: String) {
        precondition(!token.isEmpty, "an empty admin token would open admin to everyone")
        expected = Array(token.utf8)
    }

    /// Whether an `Authorization` header value carries the admin token.
    public func isAuthorized(authorization: String?) -> Bool {
        guard let authorization else { return false }
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        guard bytes.count > scheme.count else { return false }
        // The scheme is case-insensitive (RFC 9110 §11.1); `| 0x20` lower-cases ASCII letters.
        for i in 0..<scheme.count where bytes[i] | 0x20 != scheme[i] {
            return false
        }
        var start = scheme.count
        while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
        var end = bytes.count
        while end > start, bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
        return Self.constantTimeEquals(bytes[start..<end], expected)
    }

    /// Equal contents, in time that depends only on `expected.count`.
    static func constantTimeEquals(_ given: ArraySlice<UInt8>, _ expected: [UInt8]) -> Bool {
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        let base = given.startIndex
        for i in 0..<expected.count {
            let other = i < given.count ? given[base + i] : 0
            difference |= other ^ expected[i]
        }
        return difference == 0
    }

    /// A fresh random token (256 bits, base64url) for servers started without one.
    public static func generateToken() -> String {
        SessionID.random() + SessionID.random()
    }
}
