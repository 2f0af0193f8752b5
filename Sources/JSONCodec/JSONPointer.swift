/// An RFC 6901 JSON Pointer: `""` is the whole document, `/a/0` the first element of member `a`,
/// `~1` stands for `/` and `~0` for `~` inside a token.
///
/// ```swift
/// let pointer = try JSONPointer("/todos/0/title")
/// state[pointer]   // the first todo's title, or nil when absent
/// ```
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The unescaped reference tokens, outermost first.
    public let tokens: [String]

    /// Parses pointer text; it must be empty or start with `/`, and `~` must be followed by `0` or `1`.
    public init(_ text: String) throws(JSONPointerError) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        let utf8 = Array(text.utf8)
        guard utf8[0] == UInt8(ascii: "/") else {
            throw JSONPointerError(
                text: text, offset: 0, message: "JSON pointer \"\(text)\" must be empty or start with '/'")
        }
        var tokens: [String] = []
        var current: [UInt8] = []
        var position = 1
        while position < utf8.count {
            let byte = utf8[position]
            if byte == UInt8(ascii: "/") {
                tokens.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            } else if byte == UInt8(ascii: "~") {
                let next = position + 1 < utf8.count ? utf8[position + 1] : nil
                switch next {
                case UInt8(ascii: "0"): current.append(UInt8(ascii: "~"))
                case UInt8(ascii: "1"): current.append(UInt8(ascii: "/"))
                default:
                    throw JSONPointerError(
                        text: text, offset: position,
                        message: "JSON pointer \"\(text)\" has '~' at byte \(position) not followed by '0' or '1'")
                }
                position += 1
            } else {
                current.append(byte)
            }
            position += 1
        }
        tokens.append(String(decoding: current, as: UTF8.self))
        self.tokens = tokens
    }

    /// A pointer from already-unescaped tokens.
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// The pointer as RFC 6901 text (tokens escaped).
    public var description: String {
        // Escapes work on UTF-8 bytes, not Characters: "~" followed by a combining mark is one
        // Character that is not equal to "~", yet its "~" byte still needs escaping.
        var utf8: [UInt8] = []
        for token in tokens {
            utf8.append(UInt8(ascii: "/"))
            for byte in token.utf8 {
                switch byte {
                case UInt8(ascii: "~"): utf8.append(contentsOf: [UInt8(ascii: "~"), UInt8(ascii: "0")])
                case UInt8(ascii: "/"): utf8.append(contentsOf: [UInt8(ascii: "~"), UInt8(ascii: "1")])
                default: utf8.append(byte)
                }
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }
}

/// Why pointer text is not a valid RFC 6901 JSON Pointer.
public struct JSONPointerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text that failed to parse.
    public var text: String
    /// The 0-based byte offset of the problem in `text`.
    public var offset: Int
    /// A sentence for people.
    public var message: String

    /// The same as `message`.
    public var description: String { message }
}

extension JSONValue {
    /// The value the pointer refers to, or nil when a member or index along the way is absent.
    ///
    /// Array tokens must be decimal without leading zeros; `-` (one past the end) refers to nothing.
    public subscript(pointer: JSONPointer) -> JSONValue? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let member = object[token] else { return nil }
                current = member
            case .array(let array):
                guard let index = JSONPointer.arrayIndex(token), index < array.count else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }
}

extension JSONPointer {
    /// RFC 6901 §4: `0` or a non-zero digit followed by digits.
    static func arrayIndex(_ token: String) -> Int? {
        let utf8 = token.utf8
        guard let first = utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return nil }
        if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
        guard utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(token)
    }
}
