/// A session's capability token in `token` mode: 256 bits from the system CSPRNG, as 43 base64url characters.
///
/// The text is the secret itself. It goes to the client once (the 201 of `POST /sessions`, the 200 of the
/// admin replacement) and is never stored, logged or printed: the server keeps only ``hash`` and checks
/// presented tokens with ``SessionTokenHash/matches(_:)``. `description`, string interpolation and
/// `dump` show a fixed text, so a token cannot slip into a log line or an error message by accident.
///
/// ```swift
/// let token = SessionToken.generate()
/// responseBody["token"] = .string(token.text)    // the only place the text goes
/// record.tokenHash = token.hash.storedText       // what is kept, in the session's durable data
/// ```
public struct SessionToken: Sendable {
    /// Random bytes per token (API.md asks for at least 128 bits).
    public static let randomByteCount = 32
    /// The length of ``text``: unpadded base64url of ``randomByteCount`` bytes.
    public static let textLength = 43

    /// The secret text the client presents: `[A-Za-z0-9_-]{43}`, so it never holds a comma
    /// (`access_token=t1,t2` on a multi-session stream) and needs no escaping in a URL.
    public let text: String

    /// A fresh token from the system CSPRNG (`getrandom(2)` on Linux).
    public static func generate() -> SessionToken {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    /// A token from `generator`; tests pass a seeded one, the server only ever uses ``generate()``.
    static func generate(using generator: inout some RandomNumberGenerator) -> SessionToken {
        var bytes = [UInt8]()
        bytes.reserveCapacity(randomByteCount)
        for _ in 0..<(randomByteCount / 8) {
            let word: UInt64 = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return SessionToken(text: Base64URL.encode(bytes))
    }

    private init(text: String) { self.text = text }

    /// What the server stores in place of the token.
    public var hash: SessionTokenHash { SessionTokenHash(hashing: text.utf8) }
}

extension SessionToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A fixed text: the token never appears in logs or messages.
    public var description: String { "SessionToken(redacted)" }
    /// The same fixed text.
    public var debugDescription: String { description }
    /// No children, so `dump` shows nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
