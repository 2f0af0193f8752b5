/// Why a text is not strict unpadded base64url; the message names the rule and the offset, never the text.
public struct Base64URLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Reason: Sendable, Hashable {
        /// A byte outside `A–Z a–z 0–9 - _` (padding `=`, standard base64's `+` and `/`, whitespace …).
        case invalidCharacter
        /// A length of 4n+1: the last character cannot make a whole byte.
        case impossibleLength
        /// The last character sets bits beyond the last byte, so the text is not the canonical encoding.
        case nonZeroTrailingBits
    }

    /// The rule that was broken.
    public var reason: Reason
    /// The 0-based offset of the offending character.
    public var offset: Int
    /// The offending byte for `invalidCharacter` (never part of a valid token, so safe to show), else nil.
    public var byte: UInt8?

    /// An error at `offset`.
    public init(reason: Reason, offset: Int, byte: UInt8?) {
        self.reason = reason
        self.offset = offset
        self.byte = byte
    }

    /// A sentence for people: `'=' at offset 42: padding is not used in base64url here`.
    public var description: String {
        switch reason {
        case .impossibleLength:
            return "a length of 4n+1 characters cannot be base64url"
        case .nonZeroTrailingBits:
            return "the last character at offset \(offset) sets bits beyond the last byte (not canonical base64url)"
        case .invalidCharacter:
            let byte = byte ?? 0
            let why: String
            switch byte {
            case UInt8(ascii: "="): why = "padding is not used"
            case UInt8(ascii: "+"), UInt8(ascii: "/"): why = "standard base64, not base64url (use '-' and '_')"
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                why = "whitespace is not allowed"
            default: why = "not in the base64url alphabet"
            }
            return "\(Self.describe(byte)) at offset \(offset): \(why)"
        }
    }

    /// `'='` for printable ASCII, `byte 0x0A` otherwise.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return "byte 0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0xF)])"
    }
}
