import JSONCodec

/// Reading the server's JSON: parsing with the server's own codec and typed access to members, every failure an
/// ``ReactorClientError/invalidResponse(_:)`` that names what was missing.
enum APIResponse {
    /// No byte limit (the body is already in memory); deep enough for any state the server encodes.
    static let parser = JSONParser(maxDepth: 512, maxBytes: .max)

    /// Parses a body.
    static func parse(_ bytes: some Collection<UInt8>) throws(ReactorClientError) -> JSONValue {
        do {
            return try parser.parse(bytes)
        } catch {
            throw .invalidResponse("not JSON (\(error)): \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
    }

    /// Parses the `data` of an event.
    static func parse(event: ServerSentEvent) throws(ReactorClientError) -> JSONValue {
        do {
            return try parser.parse(event.data.utf8)
        } catch {
            throw .invalidResponse("event \(event.type) holds no JSON (\(error)): \(event.data.prefix(200))")
        }
    }

    /// Decodes `value` with the server's coding (`{"type": …}` actions, `@Pulse` as its value).
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, _ what: @autoclosure () -> String)
        throws(ReactorClientError) -> T
    {
        var decoder = JSONValueDecoder()
        decoder.parser = parser
        do {
            return try decoder.decode(type, from: value)
        } catch {
            throw .invalidResponse("\(what()) does not decode as \(String(reflecting: T.self)): \(error)")
        }
    }

    /// Encodes `value` as compact JSON with the server's coding.
    static func encode<T: Encodable>(_ value: T) throws(ReactorClientError) -> [UInt8] {
        do {
            return try JSONValueEncoder().encode(value)
        } catch {
            throw .encoding("\(T.self): \(error)")
        }
    }

    /// The member `key` of an object.
    static func member(_ value: JSONValue, _ key: String) throws(ReactorClientError) -> JSONValue {
        guard let member = value[key] else {
            throw .invalidResponse("no \"\(key)\" in \(value.description.prefix(200))")
        }
        return member
    }

    /// The non-negative integer member `key`.
    static func integer(_ value: JSONValue, _ key: String) throws(ReactorClientError) -> UInt64 {
        guard let number = try member(value, key).numberValue?.uint64Value else {
            throw .invalidResponse("\"\(key)\" is not a non-negative integer in \(value.description.prefix(200))")
        }
        return number
    }

    /// The string member `key`.
    static func string(_ value: JSONValue, _ key: String) throws(ReactorClientError) -> String {
        guard let string = try member(value, key).stringValue else {
            throw .invalidResponse("\"\(key)\" is not a string in \(value.description.prefix(200))")
        }
        return string
    }

    /// The boolean member `key`.
    static func bool(_ value: JSONValue, _ key: String) throws(ReactorClientError) -> Bool {
        guard let bool = try member(value, key).boolValue else {
            throw .invalidResponse("\"\(key)\" is not a boolean in \(value.description.prefix(200))")
        }
        return bool
    }
}
