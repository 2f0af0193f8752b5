/// Keyed access to an object; also presents a wire-shaped enum `{"type": "follow", …}` to synthesized
/// `Codable` as the `{"follow": {…}}` it expects.
struct JSONKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let decoder: JSONDecoderImpl
    let path: CodingPathNode?
    /// The case name when this object is a wire-shaped enum for `Key` (its `"type"` names one of `Key`'s cases).
    let enumCase: String?

    init(object: JSONObject, decoder: JSONDecoderImpl, path: CodingPathNode?) {
        self.object = object
        self.decoder = decoder
        self.path = path
        // Synthesized enum CodingKeys name the cases, so `"type": "follow"` selects the case when `Key` has
        // `follow`. Keys that accept any string (dictionaries, dynamic keys) never do: they read members
        // as they are. A fixed key set with "type" in it is hand-written code reading "type", unless the
        // enum has a case called `type`, or the value names a case that no member is called.
        guard case .string(let name)? = object["type"] else {
            enumCase = nil
            return
        }
        let typeIsKey = Key(stringValue: "type") != nil
        let acceptsAnyName = typeIsKey && Key(stringValue: "\u{0}") != nil
        if !acceptsAnyName, Key(stringValue: name) != nil, !typeIsKey || name == "type" || !object.contains(key: name) {
            enumCase = name
        } else {
            enumCase = nil
            if path == nil, !typeIsKey { decoder.rootDecoder.unmatchedCase = name }
        }
    }

    var codingPath: [any CodingKey] { CodingPathNode.keys(path) }

    var allKeys: [Key] {
        if let enumCase, let key = Key(stringValue: enumCase) { return [key] }
        let keys = object.keys.compactMap { Key(stringValue: $0) }
        // Synthesized enum decoding asks for exactly one key; when that fails, remember why in wire
        // terms so the error can say `unknown case "x"` instead of "Invalid number of keys found".
        if keys.count != 1, Key(stringValue: "type") == nil {
            decoder.rootDecoder.enumMismatch = JSONDecoderImpl.EnumMismatch(
                path: codingPath, typeMember: object["type"])
        }
        return keys
    }

    func contains(_ key: Key) -> Bool {
        object.contains(key: key.stringValue)
    }

    func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(codingPath: codingPath, debugDescription: "missing field \"\(key.stringValue)\""))
        }
        return value
    }

    func child(_ key: Key) -> CodingPathNode { CodingPathNode(parent: path, key: key) }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.unboxBool(try member(key), at: CodingPathRef(path, key))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder.unboxString(try member(key), at: CodingPathRef(path, key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.unboxDouble(try member(key), at: CodingPathRef(path, key))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.unboxFloat(try member(key), at: CodingPathRef(path, key))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    func integer<I: FixedWidthInteger>(_ key: Key) throws -> I {
        try decoder.unboxInteger(try member(key), as: I.self, at: CodingPathRef(path, key))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(try member(key), as: T.self, at: CodingPathRef(path, key))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        if let enumCase, key.stringValue == enumCase,
            SynthesizedEnumKeys.isCasePayload(outer: Key.self, nested: NestedKey.self, caseName: enumCase)
        {
            // The payload members sit beside "type"; the path stays the wire's (no case level).
            return KeyedDecodingContainer(
                JSONKeyedDecodingContainer<NestedKey>(payloadOf: object, decoder: decoder, path: path))
        }
        let value = try member(key)
        guard case .object(let nested) = value else {
            throw decoder.typeMismatch(
                JSONObject.self, expected: "an object", found: value, at: CodingPathRef(path, key))
        }
        return KeyedDecodingContainer(
            JSONKeyedDecodingContainer<NestedKey>(object: nested, decoder: decoder, path: child(key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try member(key)
        guard case .array(let array) = value else {
            throw decoder.typeMismatch(
                [JSONValue].self, expected: "an array", found: value, at: CodingPathRef(path, key))
        }
        return JSONUnkeyedDecodingContainer(array: array, decoder: decoder, path: child(key))
    }

    func superDecoder() throws -> any Decoder {
        let key = AnyKey.super
        return JSONDecoderImpl(
            value: object[key.stringValue] ?? .null, path: CodingPathNode(parent: path, key: key),
            root: decoder.rootDecoder, userInfo: decoder.userInfoStorage)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONDecoderImpl(
            value: object[key.stringValue] ?? .null, path: child(key), root: decoder.rootDecoder,
            userInfo: decoder.userInfoStorage)
    }
}

extension JSONKeyedDecodingContainer {
    /// The payload of a wire-shaped enum case: the same members, read without the enum detection.
    init(payloadOf object: JSONObject, decoder: JSONDecoderImpl, path: CodingPathNode?) {
        self.object = object
        self.decoder = decoder
        self.path = path
        self.enumCase = nil
    }
}

/// Sequential access to an array.
struct JSONUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let decoder: JSONDecoderImpl
    let path: CodingPathNode?
    var currentIndex = 0

    init(array: [JSONValue], decoder: JSONDecoderImpl, path: CodingPathNode?) {
        self.array = array
        self.decoder = decoder
        self.path = path
    }

    var codingPath: [any CodingKey] { CodingPathNode.keys(path) }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    mutating func next(_ type: Any.Type) throws -> (JSONValue, CodingPathNode) {
        let node = CodingPathNode(parent: path, key: IndexKey(currentIndex))
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: CodingPathNode.keys(node),
                    debugDescription: "expected another element, but the array has only \(array.count)"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], node)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            _ = try next(JSONValue.self)
            return false
        }
        if array[currentIndex].isNull {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, node) = try next(T.self)
        return try decoder.unbox(value, as: T.self, at: CodingPathRef(node))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        let (value, node) = try next(JSONObject.self)
        guard case .object(let object) = value else {
            throw decoder.typeMismatch(JSONObject.self, expected: "an object", found: value, at: CodingPathRef(node))
        }
        return KeyedDecodingContainer(
            JSONKeyedDecodingContainer<NestedKey>(object: object, decoder: decoder, path: node))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, node) = try next([JSONValue].self)
        guard case .array(let nested) = value else {
            throw decoder.typeMismatch([JSONValue].self, expected: "an array", found: value, at: CodingPathRef(node))
        }
        return JSONUnkeyedDecodingContainer(array: nested, decoder: decoder, path: node)
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, node) = try next(JSONValue.self)
        return JSONDecoderImpl(value: value, path: node, root: decoder.rootDecoder, userInfo: decoder.userInfoStorage)
    }
}
