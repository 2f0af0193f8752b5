/// Why the parser refused what the server sent. Framing is lost after any of these, so the
/// connection that produced it is closed (and, for a client, reconnected).
public struct NATSProtocolViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of violation, one per rule.
    public enum Kind: String, Sendable {
        /// A control line longer than ``NATSParserLimits/maxControlLineBytes``.
        case controlLineTooLong
        /// A control line that starts with no known operation.
        case unknownOperation
        /// `MSG`/`HMSG` arguments that are missing, too many, or not numbers where numbers belong.
        case malformedArguments
        /// A message larger than ``NATSParserLimits/maxPayloadBytes``.
        case payloadTooLarge
        /// The bytes after a payload are not CRLF: the announced size was wrong.
        case missingPayloadTerminator
        /// A header block that is not `NATS/1.0[ status[ text]]` and `name: value` lines ending in an
        /// empty line. Framing survives it: only that message is dropped.
        case malformedHeaders
    }

    /// Which rule was broken.
    public var kind: Kind
    /// The rule in words, for logs and errors.
    public var message: String

    /// A violation of `kind`, described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `malformedArguments: MSG needs 3 or 4 arguments`.
    public var description: String { "\(kind.rawValue): \(message)" }
}
