/// Why a JWT was refused: a reason for code, a message for the integrator reading the 401 or the log.
///
/// Every reason means 401 `unauthorized` (API.md). Messages say what to fix, for example
/// `expired 42 s ago (exp 1700000000, leeway 60 s)` or `alg RS256 is not accepted; only HS256`; they
/// never contain the token, its signature or the secret, and quote at most a short printable claim value.
public struct JWTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Reason: Sendable, Hashable {
        /// Longer than the verifier's size limit.
        case tooLarge
        /// Not three strict base64url parts, or a header or payload that is not a JSON object.
        case malformed
        /// `alg` missing or anything but `HS256` (`none`, `HS384`, `RS256`, `hs256` …).
        case algorithmNotAccepted
        /// A header parameter that changes how the token must be processed (`crit`, `b64`) or a `typ` other than JWT.
        case headerNotAccepted
        /// The signature is not the HMAC-SHA256 of the received header and payload under the configured secret.
        case signatureMismatch
        /// A required claim (`exp`, `sessions`, `rights`) is absent.
        case missingClaim
        /// A claim of the wrong type or out of range, or an unknown right or a bad `sessions` entry.
        case invalidClaim
        /// `exp` is past, beyond the leeway.
        case expired
        /// `nbf` is still ahead, beyond the leeway.
        case notYetValid
        /// `iat` is ahead, beyond the leeway (the issuer's clock or the token is wrong).
        case issuedInTheFuture
        /// `aud` is present but does not name the configured audience (or none is configured).
        case audienceNotAccepted
    }

    /// The rule that was broken.
    public var reason: Reason
    /// A sentence for people, safe to log and to send back.
    public var message: String

    /// An error with this reason and message.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// The same as `message`.
    public var description: String { message }
}

/// A JWT secret or verifier setting the server must refuse to start with.
public struct JWTConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and how to fix it; never contains the secret.
    public var message: String

    init(_ message: String) { self.message = message }

    /// The same as `message`.
    public var description: String { message }
}

enum UntrustedText {
    /// `"value"` when the value is short printable ASCII, else a neutral stand-in: claim and header values
    /// come from whoever made the token and must not put control characters or kilobytes into a log line.
    static func quote(_ value: String) -> String {
        let bytes = value.utf8
        guard bytes.count <= 32,
            bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else {
            return "(a \(bytes.count)-byte string)"
        }
        return "\"\(value)\""
    }

    /// Seconds for messages: integers without a fraction, others with up to three decimals.
    static func seconds(_ value: Double) -> String {
        if let integer = Int64(exactly: value) { return String(integer) }
        let rounded = (value * 1000).rounded() / 1000
        if let integer = Int64(exactly: rounded) { return String(integer) }
        return String(rounded)
    }
}
