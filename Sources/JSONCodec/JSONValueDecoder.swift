/// Decodes `Decodable` types from `JSONValue` (or bytes), with messages that name the field.
///
/// Enums with associated values and synthesized `Codable` are read in the wire's shape,
/// `{"type": "follow", "userID": 7}` (the case name under `"type"`, labelled values as members,
/// `_0` for unlabelled ones); hand-written `Codable` that reads a `"type"` key works unchanged.
/// An integer property takes exactly the integer written, never a rounded or wrapped one: a value out of
/// its range, with a fraction, or in double form (`1e18`, `4.0`) from 2^53 on is an error naming the field.
///
/// ```swift
/// let state = try JSONValueDecoder().decode(Counter.State.self, from: body)
/// ```
public struct JSONValueDecoder: Sendable {
    /// Values made available to `init(from:)` through `decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Limits for `decode(_:from:)` when given bytes.
    public var parser = JSONParser()

    /// A decoder with default limits and no user info.
    public init() {}

    /// Decodes `type` from an already parsed value; throws `JSONDecodingError` naming the field.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let decoder = JSONDecoderImpl(value: value, path: nil, root: nil, userInfo: userInfo)
        do {
            return try decoder.unbox(value, as: T.self, at: CodingPathRef(nil))
        } catch let error as DecodingError {
            throw JSONDecodingError(error, enumMismatch: decoder.enumMismatch)
        }
    }

    /// Parses and decodes; throws `JSONParseError` for malformed JSON, `JSONDecodingError` for a wrong shape.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try decode(type, from: try parser.parse(bytes))
    }
}

/// The `Decoder` handed to `init(from:)`: one per nested non-primitive value.
final class JSONDecoderImpl: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    let path: CodingPathNode?
    /// The decoder of the whole document: where the action decoder learns about unknown cases.
    let root: JSONDecoderImpl?
    let userInfoStorage: [CodingUserInfoKey: any Sendable]
    /// Set when a top-level keyed container found a `"type"` its key type has no case for.
    var unmatchedCase: String?
    /// The last object that an enum's synthesized decoding could not read as one of its cases.
    var enumMismatch: EnumMismatch?

    /// Where a wire-shaped enum failed to match, and what its `"type"` member held.
    struct EnumMismatch {
        let path: [any CodingKey]
        let typeMember: JSONValue?
    }

    init(value: JSONValue, path: CodingPathNode?, root: JSONDecoderImpl?, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.path = path
        self.root = root
        self.userInfoStorage = userInfo
    }

    var rootDecoder: JSONDecoderImpl { root ?? self }
    var codingPath: [any CodingKey] { CodingPathNode.keys(path) }
    var userInfo: [CodingUserInfoKey: Any] { userInfoStorage }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw typeMismatch([String: JSONValue].self, expected: "an object", found: value, at: CodingPathRef(path))
        }
        return KeyedDecodingContainer(JSONKeyedDecodingContainer<Key>(object: object, decoder: self, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw typeMismatch([JSONValue].self, expected: "an array", found: value, at: CodingPathRef(path))
        }
        return JSONUnkeyedDecodingContainer(array: array, decoder: self, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, at: CodingPathRef(path)) }
    func decode(_ type: String.Type) throws -> String { try unboxString(value, at: CodingPathRef(path)) }
    func decode(_ type: Double.Type) throws -> Double { try unboxDouble(value, at: CodingPathRef(path)) }
    func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value, at: CodingPathRef(path)) }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, as: Int.self, at: CodingPathRef(path)) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, as: Int8.self, at: CodingPathRef(path)) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, as: Int16.self, at: CodingPathRef(path)) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, as: Int32.self, at: CodingPathRef(path)) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, as: Int64.self, at: CodingPathRef(path)) }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, as: UInt.self, at: CodingPathRef(path)) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, as: UInt8.self, at: CodingPathRef(path)) }
    func decode(_ type: UInt16.Type) throws -> UInt16 {
        try unboxInteger(value, as: UInt16.self, at: CodingPathRef(path))
    }
    func decode(_ type: UInt32.Type) throws -> UInt32 {
        try unboxInteger(value, as: UInt32.self, at: CodingPathRef(path))
    }
    func decode(_ type: UInt64.Type) throws -> UInt64 {
        try unboxInteger(value, as: UInt64.self, at: CodingPathRef(path))
    }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: T.self, at: CodingPathRef(path)) }

    // MARK: Unboxing

    func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, at path: CodingPathRef) throws -> T {
        if T.self == String.self { return try unboxString(value, at: path) as! T }
        if T.self == Int.self { return try unboxInteger(value, as: Int.self, at: path) as! T }
        if T.self == Bool.self { return try unboxBool(value, at: path) as! T }
        if T.self == Double.self { return try unboxDouble(value, at: path) as! T }
        if T.self == JSONValue.self { return value as! T }
        if T.self == JSONObject.self {
            guard case .object(let object) = value else {
                throw typeMismatch(JSONObject.self, expected: "an object", found: value, at: path)
            }
            return object as! T
        }
        let decoder = JSONDecoderImpl(value: value, path: path.node, root: rootDecoder, userInfo: userInfoStorage)
        return try T(from: decoder)
    }

    func unboxString(_ value: JSONValue, at path: CodingPathRef) throws -> String {
        guard case .string(let string) = value else {
            throw typeMismatch(String.self, expected: "a string", found: value, at: path)
        }
        return string
    }

    func unboxBool(_ value: JSONValue, at path: CodingPathRef) throws -> Bool {
        guard case .bool(let bool) = value else {
            throw typeMismatch(Bool.self, expected: "a boolean", found: value, at: path)
        }
        return bool
    }

    func unboxDouble(_ value: JSONValue, at path: CodingPathRef) throws -> Double {
        guard case .number(let number) = value else {
            throw typeMismatch(Double.self, expected: "a number", found: value, at: path)
        }
        return number.doubleValue
    }

    func unboxFloat(_ value: JSONValue, at path: CodingPathRef) throws -> Float {
        let double = try unboxDouble(value, at: path)
        let float = Float(double)
        guard float.isFinite else {
            throw typeMismatch(Float.self, expected: "a number in Float's range", found: value, at: path)
        }
        return float
    }

    func unboxInteger<I: FixedWidthInteger>(_ value: JSONValue, as type: I.Type, at path: CodingPathRef) throws -> I {
        guard case .number(let number) = value else {
            throw typeMismatch(I.self, expected: "an integer", found: value, at: path)
        }
        let exact: I?
        switch number {
        case .int(let integer): exact = I(exactly: integer)
        case .uint(let integer): exact = I(exactly: integer)
        case .double(let double):
            guard double.rounded(.towardZero) == double else {
                throw typeMismatch(I.self, expected: "an integer", found: value, at: path)
            }
            exact = I(exactly: double)
            // From 2^53 on a double no longer holds every integer: the text it was read from (an integer
            // beyond 64 bits such as -9223372036854775809, a fraction, an exponent) may have been rounded
            // into range. Integers that large are taken only as plain integer literals, read exactly.
            if exact != nil, double.magnitude >= 9_007_199_254_740_992 {
                throw typeMismatch(
                    I.self,
                    expected:
                        "an integer in \(I.self)'s range (\(I.min)...\(I.max)) written exactly "
                        + "(from 2^53 on, as a plain integer without fraction or exponent)",
                    found: value, at: path)
            }
        }
        guard let exact else {
            throw typeMismatch(
                I.self, expected: "an integer in \(I.self)'s range (\(I.min)...\(I.max))", found: value, at: path)
        }
        return exact
    }

    func typeMismatch(_ type: Any.Type, expected: String, found value: JSONValue, at path: CodingPathRef)
        -> DecodingError
    {
        let context = DecodingError.Context(
            codingPath: CodingPathNode.keys(path.node),
            debugDescription: "expected \(expected), found \(CodingPathFormat.describe(value))")
        if value.isNull { return .valueNotFound(type, context) }
        return .typeMismatch(type, context)
    }
}
