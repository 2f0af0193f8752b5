/// Encodes `Encodable` types to compact JSON: one line, no spaces, keys in declaration order.
///
/// Enums with associated values and synthesized `Codable` are written in the wire's shape,
/// `{"type": "follow", "userID": 7}`; a payload-less case is `{"type": "increase"}`.
/// `nil` optionals are left out (as synthesized `encodeIfPresent` asks); non-finite floats throw.
/// There are no Foundation special cases: `Date`, `Data` and `URL` write what their own `Codable` writes.
///
/// ```swift
/// let body = try JSONValueEncoder().encode(state)   // [UInt8]
/// ```
public struct JSONValueEncoder: Sendable {
    /// Values made available to `encode(to:)` through `encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with no user info.
    public init() {}

    /// The value as compact UTF-8 JSON.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoderImpl(parent: nil, key: nil, userInfo: userInfo)
        let slot = try encoder.box(value)
        // Written straight from the builders: no intermediate JSONValue tree.
        var out = JSONWriter(capacity: 127)
        slot.write(to: &out)
        return out.buffer
    }

    /// The value as a `JSONValue` tree (for embedding in a larger document, or for `JSONPointer`).
    public func encodeValue<T: Encodable>(_ value: T) throws -> JSONValue {
        let encoder = JSONEncoderImpl(parent: nil, key: nil, userInfo: userInfo)
        return try encoder.box(value).finish()
    }
}

/// A value under construction: containers stay mutable references until the encode finishes.
enum EncodedSlot {
    case value(JSONValue)
    case object(ObjectBuilder)
    case array(ArrayBuilder)

    func finish() -> JSONValue {
        switch self {
        case .value(let value): value
        case .object(let builder): .object(builder.finish())
        case .array(let builder): .array(builder.slots.map { $0.finish() })
        }
    }

    func write(to out: inout JSONWriter) {
        switch self {
        case .value(let value): out.value(value)
        case .object(let builder):
            out.buffer.append(UInt8(ascii: "{"))
            for position in builder.members.indices {
                if position > 0 { out.buffer.append(UInt8(ascii: ",")) }
                out.key(builder.members[position].key)
                builder.members[position].slot.write(to: &out)
            }
            out.buffer.append(UInt8(ascii: "}"))
        case .array(let builder):
            out.buffer.append(UInt8(ascii: "["))
            for position in builder.slots.indices {
                if position > 0 { out.buffer.append(UInt8(ascii: ",")) }
                builder.slots[position].write(to: &out)
            }
            out.buffer.append(UInt8(ascii: "]"))
        }
    }
}

final class ObjectBuilder {
    // One array of pairs, not one of keys and one of values: one allocation less per object encoded.
    // Unchecked: a builder belongs to one encode on one thread, and the dynamic exclusivity check of a
    // class property cost ~80 instructions per member set and per object written (measured).
    @exclusivity(unchecked) var members: [(key: String, slot: EncodedSlot)] = []
    /// Key positions once the object is big enough that scanning for repeats would be quadratic.
    var index: [String: Int]?

    var isEmpty: Bool { members.isEmpty }

    /// A key encoded twice keeps its first position and its last value (as Foundation's encoder does).
    func set(_ key: String, _ slot: EncodedSlot) {
        if let index {
            if let position = index[key] {
                members[position].slot = slot
                return
            }
        } else {
            for position in members.indices where members[position].key == key {
                members[position].slot = slot
                return
            }
        }
        members.append((key, slot))
        if index != nil {
            index![key] = members.count - 1
        } else if members.count > JSONObject.indexThreshold {
            index = Dictionary(uniqueKeysWithValues: members.indices.map { (members[$0].key, $0) })
        }
    }

    func finish() -> JSONObject {
        JSONObject(uniqueKeys: members.map(\.key), values: members.map { $0.slot.finish() })
    }
}

final class ArrayBuilder {
    // Unchecked for the same reason as `ObjectBuilder.members`.
    @exclusivity(unchecked) var slots: [EncodedSlot] = []
}

/// The `Encoder` handed to `encode(to:)`: one per nested non-primitive value, linked to its parent for the path.
final class JSONEncoderImpl: Encoder, SingleValueEncodingContainer {
    let parent: JSONEncoderImpl?
    let key: (any CodingKey)?
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    var slot: EncodedSlot?

    init(parent: JSONEncoderImpl?, key: (any CodingKey)?, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.parent = parent
        self.key = key
        self.userInfoStorage = userInfo
    }

    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }

    var codingPath: [any CodingKey] {
        var keys: [any CodingKey] = []
        var current: JSONEncoderImpl? = self
        while let encoder = current {
            if let key = encoder.key { keys.append(key) }
            current = encoder.parent
        }
        return keys.reversed()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object(let builder) = slot {
            return KeyedEncodingContainer(
                JSONKeyedEncodingContainer<Key>(builder: builder, encoder: self, isEnumPayload: false))
        }
        let builder = ObjectBuilder()
        slot = .object(builder)
        return KeyedEncodingContainer(
            JSONKeyedEncodingContainer<Key>(builder: builder, encoder: self, isEnumPayload: false))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array(let builder) = slot { return JSONUnkeyedEncodingContainer(builder: builder, encoder: self) }
        let builder = ArrayBuilder()
        slot = .array(builder)
        return JSONUnkeyedEncodingContainer(builder: builder, encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    func encodeNil() throws { slot = .value(.null) }
    func encode(_ value: Bool) throws { slot = .value(.bool(value)) }
    func encode(_ value: String) throws { slot = .value(.string(value)) }
    func encode(_ value: Double) throws { slot = .value(try boxFloat(value, path: self.codingPath)) }
    func encode(_ value: Float) throws { slot = .value(try boxFloat(Self.widen(value), path: self.codingPath)) }
    func encode(_ value: Int) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: Int8) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: Int16) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: Int32) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: Int64) throws { slot = .value(.number(.int(value))) }
    func encode(_ value: UInt) throws { slot = .value(Self.boxUnsigned(UInt64(value))) }
    func encode(_ value: UInt8) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: UInt16) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: UInt32) throws { slot = .value(.number(.int(Int64(value)))) }
    func encode(_ value: UInt64) throws { slot = .value(Self.boxUnsigned(value)) }
    func encode<T: Encodable>(_ value: T) throws { slot = try box(value) }

    // MARK: Boxing

    /// The double whose shortest text is the float's shortest text:
    /// `Float(0.1)` writes "0.1", not "0.10000000149011612".
    static func widen(_ value: Float) -> Double {
        guard value.isFinite else { return Double(value) }
        return Double(value.description) ?? Double(value)
    }

    static func boxUnsigned(_ value: UInt64) -> JSONValue {
        if let exact = Int64(exactly: value) { return .number(.int(exact)) }
        return .number(.uint(value))
    }

    func boxFloat(_ value: Double, path: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(codingPath: path(), debugDescription: "\(value) has no JSON representation"))
        }
        return .number(.double(value))
    }

    /// Encodes `value` as the content of this encoder (the top level, or a child created for one member).
    func box<T: Encodable>(_ value: T) throws -> EncodedSlot {
        if T.self == String.self { return .value(.string(value as! String)) }
        if T.self == Int.self { return .value(.number(.int(Int64(value as! Int)))) }
        if T.self == Bool.self { return .value(.bool(value as! Bool)) }
        if T.self == Double.self { return .value(try boxFloat(value as! Double, path: self.codingPath)) }
        if T.self == JSONValue.self { return .value(value as! JSONValue) }
        if T.self == JSONObject.self { return .value(.object(value as! JSONObject)) }
        try value.encode(to: self)
        return slot ?? .object(ObjectBuilder())
    }

    /// Encodes a nested value through a child encoder that knows its key (for error paths).
    func boxChild<T: Encodable>(_ value: T, key: any CodingKey) throws -> EncodedSlot {
        if T.self == String.self { return .value(.string(value as! String)) }
        if T.self == Int.self { return .value(.number(.int(Int64(value as! Int)))) }
        if T.self == Bool.self { return .value(.bool(value as! Bool)) }
        if T.self == JSONValue.self { return .value(value as! JSONValue) }
        return try JSONEncoderImpl(parent: self, key: key, userInfo: userInfoStorage).box(value)
    }
}
