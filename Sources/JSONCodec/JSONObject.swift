/// A JSON object: members in document (or insertion) order, looked up by key.
///
/// Keys are unique: `init(_:)` and the setter replace the value of a repeated key in place.
/// Equality ignores member order, as JSON does.
public struct JSONObject: Sendable {
    /// One member: its name and value.
    public typealias Element = (key: String, value: JSONValue)

    @usableFromInline var memberKeys: [String]
    @usableFromInline var memberValues: [JSONValue]
    // Objects past this size get a hash index, so lookups stay O(1) for big documents while small
    // ones (almost every action and state) pay nothing beyond a short linear scan.
    @usableFromInline static var indexThreshold: Int { 12 }
    @usableFromInline var index: [String: Int]?

    /// An empty object.
    public init() {
        memberKeys = []
        memberValues = []
        index = nil
    }

    /// An object with these members in this order; a repeated key keeps its first position and last value.
    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        memberKeys.reserveCapacity(pairs.count)
        memberValues.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// Members whose keys the caller has already checked to be unique (the parser, the encoder).
    init(uniqueKeys keys: [String], values: [JSONValue]) {
        memberKeys = keys
        memberValues = values
        index = nil
        if keys.count > Self.indexThreshold { rebuildIndex() }
    }

    /// The number of members.
    public var count: Int { memberKeys.count }

    /// True when the object has no members.
    public var isEmpty: Bool { memberKeys.isEmpty }

    /// The member names in order.
    public var keys: [String] { memberKeys }

    /// The member values in order.
    public var values: [JSONValue] { memberValues }

    /// The value of the member named `key`; setting nil removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return memberValues[position]
        }
        set {
            if let position = position(of: key) {
                if let newValue {
                    memberValues[position] = newValue
                } else {
                    memberKeys.remove(at: position)
                    memberValues.remove(at: position)
                    rebuildIndex()
                }
            } else if let newValue {
                append(key, newValue)
            }
        }
    }

    /// True when a member named `key` exists.
    public func contains(key: String) -> Bool { position(of: key) != nil }

    /// The member at `position` (0-based, in order).
    public func member(at position: Int) -> Element { (memberKeys[position], memberValues[position]) }

    @inlinable func position(of key: String) -> Int? {
        if let index { return index[key] }
        for position in memberKeys.indices where memberKeys[position] == key { return position }
        return nil
    }

    /// Appends a member whose key the caller knows is new (the parser checks duplicates itself).
    @usableFromInline mutating func append(_ key: String, _ value: JSONValue) {
        memberKeys.append(key)
        memberValues.append(value)
        if index != nil {
            index![key] = memberKeys.count - 1
        } else if memberKeys.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    private mutating func rebuildIndex() {
        guard memberKeys.count > Self.indexThreshold else {
            index = nil
            return
        }
        var built: [String: Int] = [:]
        built.reserveCapacity(memberKeys.count)
        for (position, key) in memberKeys.enumerated() { built[key] = position }
        index = built
    }
}

extension JSONObject: Sequence {
    /// Iterates members in order.
    public struct Iterator: IteratorProtocol {
        let object: JSONObject
        var position = 0

        /// The next member, or nil after the last.
        public mutating func next() -> Element? {
            guard position < object.memberKeys.count else { return nil }
            defer { position += 1 }
            return (object.memberKeys[position], object.memberValues[position])
        }
    }

    /// Iterates members in order.
    public func makeIterator() -> Iterator { Iterator(object: self) }

    /// The member count (exact).
    public var underestimatedCount: Int { memberKeys.count }
}

extension JSONObject: Hashable {
    /// Same members with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.memberKeys == rhs.memberKeys { return lhs.memberValues == rhs.memberValues }
        for (key, value) in lhs {
            guard let other = rhs[key], other == value else { return false }
        }
        return true
    }

    /// Order-independent, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        // Order-independent: a commutative sum of per-member hashes.
        var sum = 0
        for position in memberKeys.indices {
            var member = Hasher()
            member.combine(memberKeys[position])
            member.combine(memberValues[position])
            sum &+= member.finalize()
        }
        hasher.combine(memberKeys.count)
        hasher.combine(sum)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object whose members keep the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }
}

extension JSONObject: CustomStringConvertible {
    /// The object as one line of JSON.
    public var description: String { JSONValue.object(self).serializedString() }
}
