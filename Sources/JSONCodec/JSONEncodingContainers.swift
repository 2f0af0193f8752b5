/// Keyed writes into an object; turns a synthesized enum's `{"follow": {…}}` into `{"type": "follow", …}`.
struct JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let builder: ObjectBuilder
    let encoder: JSONEncoderImpl
    /// True inside a wire-shaped enum case, where `"type"` is taken by the case name.
    let isEnumPayload: Bool

    var codingPath: [any CodingKey] { encoder.codingPath }

    func checkKey(_ key: Key, _ value: Any) throws {
        guard isEnumPayload, key.stringValue == "type" else { return }
        throw EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: codingPath + [key],
                debugDescription: "an enum case's value labelled \"type\" collides with the member that names the case")
        )
    }

    mutating func encodeNil(forKey key: Key) throws {
        try checkKey(key, JSONValue.null)
        builder.set(key.stringValue, .value(.null))
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try set(try float(value, key), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try set(try float(JSONEncoderImpl.widen(value), key), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try set(.number(.int(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try set(JSONEncoderImpl.boxUnsigned(UInt64(value)), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try set(.number(.int(Int64(value))), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try set(JSONEncoderImpl.boxUnsigned(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try checkKey(key, value)
        builder.set(key.stringValue, try encoder.boxChild(value, key: key))
    }

    func set(_ value: JSONValue, _ key: Key) throws {
        try checkKey(key, value)
        builder.set(key.stringValue, .value(value))
    }

    func float(_ value: Double, _ key: Key) throws -> JSONValue {
        try encoder.boxFloat(value, path: encoder.codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        if builder.isEmpty, !isEnumPayload,
            SynthesizedEnumKeys.isCasePayload(outer: Key.self, nested: NestedKey.self, caseName: key.stringValue)
        {
            builder.set("type", .value(.string(key.stringValue)))
            return KeyedEncodingContainer(
                JSONKeyedEncodingContainer<NestedKey>(builder: builder, encoder: encoder, isEnumPayload: true))
        }
        let nested = ObjectBuilder()
        builder.set(key.stringValue, .object(nested))
        let child = JSONEncoderImpl(parent: encoder, key: key, userInfo: encoder.userInfoStorage)
        child.slot = .object(nested)
        return KeyedEncodingContainer(
            JSONKeyedEncodingContainer<NestedKey>(builder: nested, encoder: child, isEnumPayload: false))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder()
        builder.set(key.stringValue, .array(nested))
        let child = JSONEncoderImpl(parent: encoder, key: key, userInfo: encoder.userInfoStorage)
        child.slot = .array(nested)
        return JSONUnkeyedEncodingContainer(builder: nested, encoder: child)
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: AnyKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    func superEncoder(named key: any CodingKey) -> any Encoder {
        let child = JSONEncoderImpl(parent: encoder, key: key, userInfo: encoder.userInfoStorage)
        let reference = ReferencingEncoder(child: child) { [builder] slot in builder.set(key.stringValue, slot) }
        return reference
    }
}

/// Appends to an array.
struct JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let builder: ArrayBuilder
    let encoder: JSONEncoderImpl

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { builder.slots.count }

    mutating func encodeNil() throws { builder.slots.append(.value(.null)) }
    mutating func encode(_ value: Bool) throws { builder.slots.append(.value(.bool(value))) }
    mutating func encode(_ value: String) throws { builder.slots.append(.value(.string(value))) }
    mutating func encode(_ value: Int) throws { builder.slots.append(.value(.number(.int(Int64(value))))) }
    mutating func encode(_ value: Double) throws {
        builder.slots.append(.value(try encoder.boxFloat(value, path: encoder.codingPath + [IndexKey(count)])))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        builder.slots.append(try encoder.boxChild(value, key: IndexKey(count)))
    }

    func childEncoder() -> JSONEncoderImpl {
        JSONEncoderImpl(parent: encoder, key: IndexKey(count), userInfo: encoder.userInfoStorage)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let child = childEncoder()
        let nested = ObjectBuilder()
        child.slot = .object(nested)
        builder.slots.append(.object(nested))
        return KeyedEncodingContainer(
            JSONKeyedEncodingContainer<NestedKey>(builder: nested, encoder: child, isEnumPayload: false))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = childEncoder()
        let nested = ArrayBuilder()
        child.slot = .array(nested)
        builder.slots.append(.array(nested))
        return JSONUnkeyedEncodingContainer(builder: nested, encoder: child)
    }

    mutating func superEncoder() -> any Encoder {
        let child = childEncoder()
        let position = builder.slots.count
        builder.slots.append(.object(ObjectBuilder()))
        return ReferencingEncoder(child: child) { [builder] slot in builder.slots[position] = slot }
    }
}

/// An encoder whose result lands in a parent container slot whenever it is written (for `superEncoder`).
final class ReferencingEncoder: Encoder {
    let child: JSONEncoderImpl
    let store: (EncodedSlot) -> Void

    init(child: JSONEncoderImpl, store: @escaping (EncodedSlot) -> Void) {
        self.child = child
        self.store = store
        store(.object(ObjectBuilder()))
    }

    var codingPath: [any CodingKey] { child.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { child.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let container = child.container(keyedBy: type)
        if let slot = child.slot { store(slot) }
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let container = child.unkeyedContainer()
        if let slot = child.slot { store(slot) }
        return container
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ReferencingSingleValue(encoder: self)
    }
}

/// Writes a single value through a `ReferencingEncoder` into its parent's slot.
struct ReferencingSingleValue: SingleValueEncodingContainer {
    let encoder: ReferencingEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.store(.value(.null)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.store(try encoder.child.box(value))
    }
}
