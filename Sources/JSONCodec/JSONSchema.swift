/// A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) kept as its JSON document, with builders for
/// the shapes a wire format needs. `validate(_:)` checks a value against the keywords the builders write.
///
/// ```swift
/// let item = JSONSchema.object(["id": .int, "title": .string(), "done": .boolean])
/// item.json                                                    // {"type":"object","required":["id","title","done"],…}
/// item.validate(["id": 1, "title": "milk", "done": false])     // [] (no violations)
/// ```
public struct JSONSchema: Sendable, Hashable {
    /// The schema document: an object of keywords, or `true` (anything).
    public var json: JSONValue

    /// A schema from its JSON document.
    public init(_ json: JSONValue) {
        self.json = json
    }

    /// Any JSON value (`{}`).
    public static let any = JSONSchema(.object(JSONObject()))

    /// `true` or `false`.
    public static let boolean = JSONSchema(["type": "boolean"])

    /// `null`.
    public static let null = JSONSchema(["type": "null"])

    /// Any JSON number.
    public static let number = JSONSchema(["type": "number"])

    /// A Swift `Int` (64 bits): an integer from `Int.min` to `Int.max`.
    public static let int = integer(minimum: Int64.min, maximum: Int64.max)

    /// Any string (`pattern` is an ECMA-262 regular expression; lengths count Unicode code points).
    public static func string(pattern: String? = nil, minLength: Int? = nil, maxLength: Int? = nil) -> JSONSchema {
        var object = JSONObject([("type", "string")])
        if let minLength { object["minLength"] = .number(.int(Int64(minLength))) }
        if let maxLength { object["maxLength"] = .number(.int(Int64(maxLength))) }
        if let pattern { object["pattern"] = .string(pattern) }
        return JSONSchema(.object(object))
    }

    /// An integer within the bounds given (inclusive).
    public static func integer(minimum: Int64? = nil, maximum: Int64? = nil) -> JSONSchema {
        var object = JSONObject([("type", "integer")])
        if let minimum { object["minimum"] = .number(.int(minimum)) }
        if let maximum { object["maximum"] = .number(.int(maximum)) }
        return JSONSchema(.object(object))
    }

    /// A non-negative integer up to `maximum` (a `UInt64` by default).
    public static func unsigned(maximum: UInt64 = .max) -> JSONSchema {
        JSONSchema(["type": "integer", "minimum": 0, "maximum": .number(.uint(maximum))])
    }

    /// An array whose elements all match `items`.
    public static func array(_ items: JSONSchema, minItems: Int? = nil, maxItems: Int? = nil) -> JSONSchema {
        var object = JSONObject([("type", "array"), ("items", items.json)])
        if let minItems { object["minItems"] = .number(.int(Int64(minItems))) }
        if let maxItems { object["maxItems"] = .number(.int(Int64(maxItems))) }
        return JSONSchema(.object(object))
    }

    /// An object with these members, in this order. Every member is required except those in
    /// `optional`; other members are allowed unless `additionalProperties` is false (a decoder that
    /// ignores members it does not read accepts them, and its schema must say so).
    public static func object(
        _ properties: KeyValuePairs<String, JSONSchema>, optional: Set<String> = [], additionalProperties: Bool = true
    ) -> JSONSchema {
        var members = JSONObject([("type", "object")])
        let required = properties.map(\.key).filter { !optional.contains($0) }
        if !required.isEmpty { members["required"] = .array(required.map(JSONValue.string)) }
        members["properties"] = .object(JSONObject(properties.map { ($0.key, $0.value.json) }))
        if !additionalProperties { members["additionalProperties"] = false }
        return JSONSchema(.object(members))
    }

    /// Exactly one of `schemas`.
    public static func oneOf(_ schemas: [JSONSchema]) -> JSONSchema {
        JSONSchema(["oneOf": .array(schemas.map(\.json))])
    }

    /// At least one of `schemas`.
    public static func anyOf(_ schemas: [JSONSchema]) -> JSONSchema {
        JSONSchema(["anyOf": .array(schemas.map(\.json))])
    }

    /// Every one of `schemas`.
    public static func allOf(_ schemas: [JSONSchema]) -> JSONSchema {
        JSONSchema(["allOf": .array(schemas.map(\.json))])
    }

    /// Exactly `value`.
    public static func constant(_ value: JSONValue) -> JSONSchema {
        JSONSchema(["const": value])
    }

    /// One of `values`.
    public static func enumeration(_ values: [JSONValue]) -> JSONSchema {
        JSONSchema(["enum": .array(values)])
    }

    /// A reference to a schema elsewhere in the same document (`#/components/schemas/Name`).
    public static func reference(_ target: String) -> JSONSchema {
        JSONSchema(["$ref": .string(target)])
    }

    /// This schema or `null`: a Swift optional that is written as `null` (not left out).
    public var orNull: JSONSchema {
        guard case .object(var object) = json else { return self }
        if case .string(let type)? = object["type"], object["enum"] == nil, object["const"] == nil {
            object["type"] = .array([.string(type), "null"])
            return JSONSchema(.object(object))
        }
        return .anyOf([self, .null])
    }

    /// This schema with a `title` (what it is, a few words) and a `description`.
    public func titled(_ title: String, _ description: String? = nil) -> JSONSchema {
        adding("title", .string(title)).adding("description", description.map(JSONValue.string))
    }

    /// This schema with a `description`.
    public func described(_ description: String) -> JSONSchema {
        adding("description", .string(description))
    }

    /// This schema with `keyword` set to `value` (nil leaves it unchanged).
    public func adding(_ keyword: String, _ value: JSONValue?) -> JSONSchema {
        guard let value, case .object(var object) = json else { return self }
        object[keyword] = value
        return JSONSchema(.object(object))
    }

    /// The value of `keyword`, when the schema is an object that has it.
    public subscript(keyword: String) -> JSONValue? { json[keyword] }
}

extension JSONSchema: ExpressibleByDictionaryLiteral {
    /// A schema written as its keywords: `["type": "string", "format": "date-time"]`.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(.object(JSONObject(elements)))
    }
}
