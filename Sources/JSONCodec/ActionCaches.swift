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

    /// A decoded bare action and its canonical JSON (see ``decodeActionWithJSON(_:from:)``), one
    /// buffer shared by every action log entry of that case.
    @usableFromInline
    struct Cached: Sendable {
        /// The value, in a class box: reading it back is a class cast, where an `any Sendable` took an
        /// existential cast and two copies through the type's metadata (~700 instructions per action).
        @usableFromInline let box: AnyObject & Sendable
        @usableFromInline let json: [UInt8]

        @usableFromInline
        init<A: Sendable>(value: A, json: [UInt8]) {
            box = CachedValue(value)
            self.json = json
        }

        /// The value when it is an `A`, else nil.
        @inlinable
        func value<A: Sendable>(as type: A.Type) -> A? {
            (box as? CachedValue<A>)?.value
        }
    }

    /// A cached action value, boxed.
    @usableFromInline
    final class CachedValue<A: Sendable>: Sendable {
        @usableFromInline let value: A

        @usableFromInline
        init(_ value: A) { self.value = value }
    }

    /// Bounded, because case names come from clients (only successful decodes are stored).
    static let capacity = 4096
    @usableFromInline static let cache = Mutex<[Key: Cached]>([:])

    /// A decoded bare action, found by its type and the bytes of its case name.
    @usableFromInline
    struct RecentEntry: Sendable {
        let type: ObjectIdentifier
        let name: [UInt8]
        let cached: Cached
    }

    /// The first bare actions decoded (a handful of case names per type in practice), searched by
    /// bytes before `cache`: no `String` is made and nothing is hashed (~600 instructions per action).
    static let recentCapacity = 16
    @usableFromInline static let recent = Mutex<[RecentEntry]>([])

    /// The cached bare action `name` of `type` from `recent`, or nil.
    @usableFromInline
    static func recentValue(type: ObjectIdentifier, name: UnsafeBufferPointer<UInt8>) -> Cached? {
        recent.withLock { entries in
            for entry in entries where entry.type == type && entry.name.count == name.count {
                let same = entry.name.withUnsafeBufferPointer { stored in
                    for i in 0..<stored.count where stored[i] != name[i] { return false }
                    return true
                }
                if same { return entry.cached }
            }
            return nil
        }
    }

    /// Remembers a decoded bare action in `recent` while there is room.
    static func remember(type: ObjectIdentifier, name: String, cached: Cached) {
        recent.withLock { entries in
            // Once full, checked before any bytes are copied: every later bare action comes here.
            guard entries.count < recentCapacity else { return }
            let bytes = Array(name.utf8)
            guard !entries.contains(where: { $0.type == type && $0.name == bytes }) else { return }
            entries.append(RecentEntry(type: type, name: bytes, cached: cached))
        }
    }

    /// The case name when the body is exactly `{"type":"<name>"}` (whitespace allowed, no escapes), else nil.
    @usableFromInline
    static func caseName(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        nameRange(in: bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
    }

    /// Where the case name lies when the body is exactly `{"type":"<name>"}`
    /// (whitespace allowed, no escapes), else nil.
    @usableFromInline
    static func nameRange(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
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
        return start..<end
    }
}
