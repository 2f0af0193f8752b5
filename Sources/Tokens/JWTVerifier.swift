import JSONCodec

/// Verifies HS256 JWTs in compact form (RFC 7519, RFC 7515 §7.1) and returns their claims.
///
/// In order, each step refusing with a ``JWTError``: the size limit; exactly three strict base64url parts;
/// a header that is a JSON object with `"alg": "HS256"` exactly and nothing that changes processing
/// (`crit`, `b64`, a `typ` other than JWT); a 32-byte signature equal, in constant time, to the
/// HMAC-SHA256 of the exact received `header.payload` bytes. Only then is the payload decoded and its
/// claims read (`exp` required; `nbf`, `iat` optional; `sessions`, `rights` required; `aud` per RFC 7519
/// §4.1.3) and checked against `now` give or take the leeway. Time comes only from the caller.
///
/// ```swift
/// let verifier = try JWTVerifier(secret: JWTSecret(bytes: secretBytes), leewaySeconds: 60)
/// do {
///     let claims = try verifier.verify(bearer, now: Double(clock.wallNanoseconds()) / 1e9)
///     guard claims.allows(right: .read, sessionID: id) else { … 403 forbidden }
/// } catch {
///     … 401 unauthorized, error.message says why (never the token)
/// }
/// ```
public struct JWTVerifier: Sendable {
    /// The default size limit of a token, in bytes.
    public static let defaultMaxTokenBytes = 8192
    /// The default clock skew tolerated, in seconds.
    public static let defaultLeewaySeconds = 60
    /// The largest clock skew that may be configured, in seconds: more would keep expired tokens alive.
    public static let maxLeewaySeconds = 300

    /// The tolerated clock skew for `exp`, `nbf` and `iat`, in seconds.
    public let leewaySeconds: Int
    /// The `aud` value tokens must name, or nil to refuse every token that names an audience.
    public let audience: String?
    /// Tokens longer than this many bytes are refused before any decoding.
    public let maxTokenBytes: Int
    let secret: JWTSecret

    /// A verifier for tokens signed with `secret`; the leeway must lie in 0…``maxLeewaySeconds``.
    public init(
        secret: JWTSecret, leewaySeconds: Int = defaultLeewaySeconds, audience: String? = nil,
        maxTokenBytes: Int = defaultMaxTokenBytes
    ) throws(JWTConfigurationError) {
        guard (0...Self.maxLeewaySeconds).contains(leewaySeconds) else {
            throw JWTConfigurationError(
                "the JWT leeway is \(leewaySeconds) s; it must lie between 0 and \(Self.maxLeewaySeconds) s")
        }
        guard maxTokenBytes > 0 else {
            throw JWTConfigurationError("the JWT size limit must be positive, not \(maxTokenBytes)")
        }
        if let audience, audience.isEmpty {
            throw JWTConfigurationError("the JWT audience, when set, must not be empty")
        }
        self.secret = secret
        self.leewaySeconds = leewaySeconds
        self.audience = audience
        self.maxTokenBytes = maxTokenBytes
    }

    /// The claims of `token` if it is valid at `now` (Unix seconds), else why not.
    public func verify(_ token: some StringProtocol, now: Double) throws(JWTError) -> JWTClaims {
        // Checked before the copy, so an oversized header costs nothing; a String's UTF-8 count is O(1).
        guard token.utf8.count <= maxTokenBytes else { throw tooLarge() }
        return try verify(bytes: Array(token.utf8), now: now)
    }

    /// The claims of the token in `bytes` (its ASCII text) if it is valid at `now`, else why not.
    public func verify(bytes token: [UInt8], now: Double) throws(JWTError) -> JWTClaims {
        guard token.count <= maxTokenBytes else { throw tooLarge() }
        let dots = token.indices.filter { token[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw JWTError(
                .malformed,
                "not a compact JWT: expected three base64url parts separated by '.', found \(dots.count + 1)")
        }
        let headerText = token[..<dots[0]]
        let payloadText = token[(dots[0] + 1)..<dots[1]]
        let signatureText = token[(dots[1] + 1)...]

        let header = try Self.object(decoding: headerText, part: "header", maxBytes: maxTokenBytes)
        try Self.checkHeader(header)

        let signature: [UInt8]
        do {
            signature = try Base64URL.decode(signatureText)
        } catch {
            throw JWTError(.malformed, "the signature is not base64url: \(error)")
        }
        guard signature.count == HMACSHA256.byteCount else {
            throw JWTError(
                .signatureMismatch,
                "the signature is \(signature.count) bytes; an HS256 signature is \(HMACSHA256.byteCount)")
        }
        // RFC 7515 §5.2: the MAC covers the received ASCII bytes of `header.payload`, not a re-encoding.
        guard ConstantTime.equals(secret.signature(of: token[..<dots[1]]), signature) else {
            throw JWTError(.signatureMismatch, "signature does not match the configured secret")
        }

        let payload = try Self.object(decoding: payloadText, part: "payload", maxBytes: maxTokenBytes)
        let claims = try JWTClaims(payload: payload, audience: audience)
        try claims.checkTimes(now: now, leeway: Double(leewaySeconds))
        return claims
    }

    func tooLarge() -> JWTError { JWTError(.tooLarge, "the token is longer than \(maxTokenBytes) bytes, the limit") }

    /// The JSON object a part encodes, or why it does not.
    static func object(decoding text: ArraySlice<UInt8>, part: String, maxBytes: Int) throws(JWTError) -> JSONObject {
        guard !text.isEmpty else { throw JWTError(.malformed, "the \(part) is empty") }
        let json: [UInt8]
        do {
            json = try Base64URL.decode(text)
        } catch {
            throw JWTError(.malformed, "the \(part) is not base64url: \(error)")
        }
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: 16, maxBytes: maxBytes).parse(json)
        } catch {
            throw JWTError(.malformed, "the \(part) is not JSON: \(describe(error))")
        }
        guard case .object(let object) = value else {
            throw JWTError(.malformed, "the \(part) must be a JSON object, not \(JWTClaims.kind(value))")
        }
        return object
    }

    /// The parser's finding without its quotation of the input (a member name could be anything).
    static func describe(_ error: JSONParseError) -> String {
        let what: String
        switch error.reason {
        case .unexpectedEnd: what = "it ends early"
        case .unexpectedByte: what = "unexpected character"
        case .invalidNumber: what = "invalid number"
        case .numberOutOfRange: what = "number out of range"
        case .invalidEscape: what = "invalid escape"
        case .invalidSurrogate: what = "unpaired surrogate escape"
        case .controlCharacter: what = "control character in a string"
        case .invalidUTF8: what = "invalid UTF-8"
        case .duplicateKey: what = "a member name appears twice"
        case .depthLimitExceeded: what = "nested too deeply"
        case .inputTooLarge: what = "too large"
        case .trailingData: what = "data after the JSON value"
        }
        return "\(what) at byte \(error.offset)"
    }
}
