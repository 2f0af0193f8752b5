import Synchronization

/// Per-type sets of `ActionCaseNames`, built once.
enum ActionCaseNameTable {
    static let sets = Mutex<[ObjectIdentifier: Set<String>]>([:])

    static func names(of type: any ActionCaseNames.Type) -> Set<String> {
        let id = ObjectIdentifier(type)
        if let known = sets.withLock({ $0[id] }) { return known }
        let built = Set(type.actionCaseNames)
        sets.withLock { $0[id] = built }
        return built
    }
}

/// The fast path for payload-less actions: recognizes `{"type":"name"}` bytes and caches decoded values.
@usableFromInline
enum BareAction {
    @usableFromInline
    struct Key: Hashable, Sendable {
        let type: ObjectIdentifier
        let name: String

        @usableFromInline
        init(type: ObjectIdentifier, name: String) {
            self.type = type
            self.name = name
        }
    }

    /// Bounded, because case names come from clients (only successful decodes are stored).
    static let capacity = 4096
    @usableFromInline static let cache = Mutex<[Key: any Sendable]>([:])

    /// The case name when the body is exactly `{"type":"<name>"}` (whitespace allowed, no escapes), else nil.
    @usableFromInline
    static func caseName(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var position = 0
        func skipWhitespace() {
            while position < bytes.count,
                bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D || bytes[position] == 0x09
            {
                position += 1
            }
        }
        func expect(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }
        skipWhitespace()
        guard expect(UInt8(ascii: "{")) else { return nil }
        skipWhitespace()
        for byte in "\"type\"".utf8 { guard expect(byte) else { return nil } }
        skipWhitespace()
        guard expect(UInt8(ascii: ":")) else { return nil }
        skipWhitespace()
        guard expect(UInt8(ascii: "\"")) else { return nil }
        let start = position
        // Plain printable ASCII only; anything else takes the general, validating path.
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            let byte = bytes[position]
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        let end = position
        guard expect(UInt8(ascii: "\"")) else { return nil }
        skipWhitespace()
        guard expect(UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        guard position == bytes.count else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }
}
