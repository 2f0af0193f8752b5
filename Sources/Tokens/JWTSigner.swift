import JSONCodec

/// Mints HS256 JWTs (header `{"alg":"HS256","typ":"JWT"}`), as an app's backend would: for tests, the
/// README's examples and the Swift client. The server itself only verifies.
///
/// ```swift
/// let signer = JWTSigner(secret: try JWTSecret(bytes: secretBytes))
/// let jwt = signer.sign(sessions: ["cart-42", "user-7-*"], rights: [.read, .act], expiresAt: now + 3600)
/// // Authorization: Bearer <jwt>
/// ```
public struct JWTSigner: Sendable {
    /// The header every token gets, already encoded: `{"alg":"HS256","typ":"JWT"}`.
    static let encodedHeader = Base64URL.encodedBytes(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))

    let secret: JWTSecret

    /// A signer with the shared secret.
    public init(secret: JWTSecret) { self.secret = secret }

    /// A token carrying `payload` as its claims, exactly as given (members in order).
    public func sign(payload: JSONObject) -> String {
        sign(payloadJSON: JSONValue.object(payload).serialized())
    }

    /// A token for `sessions` (ids, `prefix*` or `*`) and `rights`, valid until `expiresAt` (Unix seconds).
    public func sign(
        sessions: [String], rights: [SessionRight], expiresAt: Int64, notBefore: Int64? = nil, issuedAt: Int64? = nil,
        subject: String? = nil
    ) -> String {
        var payload = JSONObject()
        if let subject { payload["sub"] = .string(subject) }
        payload["sessions"] = .array(sessions.map { .string($0) })
        payload["rights"] = .array(rights.map { .string($0.rawValue) })
        if let issuedAt { payload["iat"] = .number(.int(issuedAt)) }
        if let notBefore { payload["nbf"] = .number(.int(notBefore)) }
        payload["exp"] = .number(.int(expiresAt))
        return sign(payload: payload)
    }

    /// A token whose payload part encodes exactly `payloadJSON` (tests use it for payloads JSONValue cannot
    /// write, such as a repeated member).
    public func sign(payloadJSON: [UInt8]) -> String {
        var signingInput = Self.encodedHeader
        signingInput.append(UInt8(ascii: "."))
        signingInput.append(contentsOf: Base64URL.encodedBytes(payloadJSON))
        let signature = secret.signature(of: signingInput)
        signingInput.append(UInt8(ascii: "."))
        signingInput.append(contentsOf: Base64URL.encodedBytes(signature))
        return String(decoding: signingInput, as: UTF8.self)
    }
}
