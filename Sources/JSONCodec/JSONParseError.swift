/// Why and where a document is not strict RFC 8259 JSON (or exceeds the parser's limits).
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Reason: Sendable, Hashable {
        /// The input ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue the value here.
        case unexpectedByte
        /// A number that breaks the grammar (leading zero, missing digits).
        case invalidNumber
        /// A number too large for a `Double` (for example `1e400`).
        case numberOutOfRange
        /// A backslash escape that is not one of `\" \\ \/ \b \f \n \r \t \uXXXX`.
        case invalidEscape
        /// A `\u` escape that leaves a UTF-16 surrogate unpaired.
        case invalidSurrogate
        /// A raw control character (U+0000–U+001F) inside a string.
        case controlCharacter
        /// Bytes that are not well-formed UTF-8 inside a string.
        case invalidUTF8
        /// An object that names the same member twice.
        case duplicateKey
        /// Arrays and objects nested deeper than `maxDepth`.
        case depthLimitExceeded
        /// A document longer than `maxBytes`.
        case inputTooLarge
        /// Something other than whitespace after the document.
        case trailingData
    }

    /// The 0-based byte offset of the offending byte (the input length when the input ended early).
    public var offset: Int
    /// The rule that was broken.
    public var reason: Reason
    /// A sentence for people: `unexpected '}' at byte 12: expected a value`.
    public var message: String

    /// Creates an error; the parser builds the message.
    public init(offset: Int, reason: Reason, message: String) {
        self.offset = offset
        self.reason = reason
        self.message = message
    }

    /// The same as `message`.
    public var description: String { message }
}

extension JSONParseError {
    /// `'}'` for printable ASCII, `byte 0x0A` otherwise: what the reader sees in the message.
    static func describe(byte: UInt8) -> String {
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(hex(byte))"
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
