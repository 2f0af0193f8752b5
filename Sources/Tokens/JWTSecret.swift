/// The shared HS256 secret (`auth.jwt.secret`): at least 32 bytes, held only as a prepared HMAC.
///
/// RFC 7518 §3.2 requires an HS256 key of at least 256 bits; a shorter one is refused with a message that
/// says how long it was and how to make a good one, never what it was. A secret configured as text is
/// used as its UTF-8 bytes, as PyJWT, jsonwebtoken and jose do with a string key.
///
/// ```swift
/// let secret = try JWTSecret(bytes: Array(configuration.auth.jwt.secret.utf8))
/// let verifier = try JWTVerifier(secret: secret)
/// ```
public struct JWTSecret: Sendable {
    /// The shortest secret accepted, in bytes (256 bits).
    public static let minimumByteCount = 32

    /// HMAC-SHA256 keyed with the secret, ready to copy per token.
    let mac: HMACSHA256

    /// The secret `bytes`, or an error when there are fewer than ``minimumByteCount``.
    public init(bytes: some Collection<UInt8>) throws(JWTConfigurationError) {
        guard bytes.count >= Self.minimumByteCount else {
            throw JWTConfigurationError(
                "the JWT secret is \(bytes.count) bytes; "
                    + "HS256 needs at least \(Self.minimumByteCount) (256 bits, RFC 7518 §3.2). "
                    + "Generate one with `openssl rand -base64 48`")
        }
        mac = HMACSHA256(key: bytes)
    }

    /// The HS256 signature (HMAC-SHA256) of `signingInput`, the `header.payload` bytes.
    func signature(of signingInput: some Collection<UInt8>) -> [UInt8] {
        var mac = mac
        mac.update(signingInput)
        return mac.finalize()
    }
}

extension JWTSecret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A fixed text: the secret never appears in logs or messages.
    public var description: String { "JWTSecret(redacted)" }
    /// The same fixed text.
    public var debugDescription: String { description }
    /// No children, so `dump` shows nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
