/// One entry of a JWT's `sessions` claim: an exact id, a prefix (`"user-42-*"`) or every id (`"*"`).
///
/// Entries follow the session-id grammar of API.md (`[A-Za-z0-9_-]{1,64}`), with `*` allowed only as the
/// last character, so a typo such as `"a b"` or `"*abc"` is reported instead of silently matching nothing.
/// Matching compares UTF-8 bytes, never Unicode-equivalent strings.
///
/// ```swift
/// let pattern = try SessionPattern(claim: "user-42-*")
/// pattern.matches("user-42-cart")   // true
/// pattern.matches("user-421")       // false
/// ```
public enum SessionPattern: Sendable, Hashable, CustomStringConvertible {
    /// `*`: every id, server-chosen ones included.
    case any
    /// `prefix*`: every id that starts with `prefix` (the prefix itself included).
    case prefix(String)
    /// One id.
    case exact(String)

    /// The longest session id (API.md).
    static let maxIDLength = 64

    /// Parses one claim entry; the error says what is wrong with it without repeating it.
    public init(claim entry: String) throws(SessionPatternError) {
        let bytes = Array(entry.utf8)
        guard !bytes.isEmpty else { throw SessionPatternError("is empty") }
        if bytes == [UInt8(ascii: "*")] {
            self = .any
            return
        }
        let isPrefix = bytes.last == UInt8(ascii: "*")
        let id = isPrefix ? bytes.dropLast() : bytes[...]
        guard id.count <= Self.maxIDLength else {
            throw SessionPatternError("is longer than a session id (\(Self.maxIDLength) characters)")
        }
        for byte in id where !Self.isIDByte(byte) {
            if byte == UInt8(ascii: "*") { throw SessionPatternError("has a '*' that is not its last character") }
            throw SessionPatternError("has a character outside A-Z a-z 0-9 _ - (and a final '*')")
        }
        self = isPrefix ? .prefix(String(decoding: id, as: UTF8.self)) : .exact(entry)
    }

    /// Whether the session `id` is covered by this entry.
    public func matches(_ id: String) -> Bool {
        switch self {
        case .any: true
        case .prefix(let prefix): id.utf8.starts(with: prefix.utf8)
        case .exact(let exact): id.utf8.elementsEqual(exact.utf8)
        }
    }

    /// The claim's spelling of the entry.
    public var description: String {
        switch self {
        case .any: "*"
        case .prefix(let prefix): prefix + "*"
        case .exact(let id): id
        }
    }

    static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}

/// Why a `sessions` entry is not an id, a prefix ending in `*`, or `*`.
public struct SessionPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, as the end of a sentence that starts with the entry's position: `has a '*' that is not …`.
    public var problem: String

    init(_ problem: String) { self.problem = problem }

    /// The same as `problem`.
    public var description: String { problem }
}
