import JSONCodec
import Testing

/// The schema builders write draft 2020-12 keywords, and the validator checks each one it claims to.
@Suite struct JSONSchemaTests {
    static func parse(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

    @Test func buildersWriteTheKeywords() {
        let item = JSONSchema.object(
            ["id": .int, "title": .string(pattern: "^a"), "note": JSONSchema.string().orNull], optional: ["note"])
        #expect(
            item.json.serializedString()
                == #"{"type":"object","required":["id","title"],"properties":{"#
                + #""id":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},"#
                + #""title":{"type":"string","pattern":"^a"},"note":{"type":["string","null"]}}}"#
        )
        #expect(
            JSONSchema.unsigned().json.serializedString()
                == #"{"type":"integer","minimum":0,"maximum":18446744073709551615}"#)
        #expect(
            JSONSchema.object(["a": .boolean]).orNull.json.serializedString()
                == #"{"type":["object","null"],"required":["a"],"properties":{"a":{"type":"boolean"}}}"#)
        #expect(
            JSONSchema.constant("x").orNull.json.serializedString() == #"{"anyOf":[{"const":"x"},{"type":"null"}]}"#)
    }

    /// (schema, value, valid): one row per keyword and edge, each valid and invalid.
    static let cases: [(String, String, Bool)] = [
        (#"{"type":"integer"}"#, "3", true), (#"{"type":"integer"}"#, "3.0", true),
        (#"{"type":"integer"}"#, "3.5", false),
        (#"{"type":"integer"}"#, #""3""#, false), (#"{"type":["string","null"]}"#, "null", true),
        (#"{"type":["string","null"]}"#, "1", false),
        (#"{"type":"number"}"#, "1e300", true), (#"{"type":"boolean"}"#, "0", false),
        (#"{"type":"array"}"#, "{}", false),
        (#"{"minimum":0,"maximum":18446744073709551615}"#, "18446744073709551615", true),
        (#"{"minimum":0,"maximum":18446744073709551615}"#, "18446744073709551616", false),
        // Beyond 64 bits the parser keeps a double: -2^63 - 1 reads as -2^63, the next double below it does not.
        (#"{"minimum":-9223372036854775808}"#, "-9223372036854775808", true),
        (#"{"minimum":-9223372036854775808}"#, "-9223372036854777856", false),
        (#"{"exclusiveMinimum":1}"#, "1", false), (#"{"exclusiveMaximum":1}"#, "0.5", true),
        (#"{"maximum":1}"#, "1.5", false),
        (#"{"minimum":-2}"#, "-1.5", true), (#"{"maximum":-2}"#, "-2.5", true), (#"{"minimum":0.5}"#, "0", false),
        (#"{"minLength":2,"maxLength":3}"#, #""é€""#, true), (#"{"maxLength":1}"#, #""ab""#, false),
        (#"{"minLength":1}"#, #""""#, false),
        (#"{"pattern":"^[a-z]{2}$"}"#, #""ab""#, true), (#"{"pattern":"^[a-z]{2}$"}"#, #""abc""#, false),
        (#"{"pattern":"b"}"#, #""abc""#, true),
        (#"{"enum":["a",1]}"#, "1.0", true), (#"{"enum":["a",1]}"#, #""b""#, false),
        (#"{"const":{"a":[1]}}"#, #"{"a":[1]}"#, true),
        (#"{"const":"a"}"#, #""b""#, false),
        (#"{"required":["a"],"properties":{"a":{"type":"string"}}}"#, #"{"a":"x","b":1}"#, true),
        (#"{"required":["a"]}"#, #"{"b":1}"#, false), (#"{"properties":{"a":{"type":"string"}}}"#, #"{"a":1}"#, false),
        (#"{"properties":{"a":{}},"additionalProperties":false}"#, #"{"a":1,"b":2}"#, false),
        (#"{"additionalProperties":{"type":"integer"}}"#, #"{"b":2}"#, true),
        (#"{"items":{"type":"integer"},"minItems":1,"maxItems":2}"#, "[1,2]", true),
        (#"{"items":{"type":"integer"}}"#, #"[1,"x"]"#, false),
        (#"{"minItems":1}"#, "[]", false), (#"{"maxItems":1}"#, "[1,2]", false),
        (#"{"oneOf":[{"type":"integer"},{"minimum":0}]}"#, "-1", true),
        (#"{"oneOf":[{"type":"integer"},{"minimum":0}]}"#, "1", false),
        (#"{"anyOf":[{"type":"integer"},{"type":"string"}]}"#, "true", false),
        (#"{"allOf":[{"minimum":0},{"maximum":1}]}"#, "2", false),
        (#"{"not":{"type":"null"}}"#, "null", false), (#"{"not":{"type":"null"}}"#, "0", true),
        (##"{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}"##, "1", false), ("true", "1", true),
        ("false", "1", false),
        (#"{"title":"t","description":"d","format":"date-time","x-note":1}"#, "1", true),
    ]

    @Test(arguments: cases) func validatesEachKeyword(_ schema: String, _ value: String, _ valid: Bool) throws {
        let violations = JSONSchema(try Self.parse(schema)).validate(try Self.parse(value))
        #expect(violations.isEmpty == valid, "\(schema) against \(value): \(violations)")
    }

    @Test func namesWhereAndWhat() throws {
        let schema = JSONSchema.object(["items": .array(.object(["id": .int]))])
        let violations = schema.validate(try Self.parse(#"{"items":[{"id":1},{"id":"2"},{}]}"#))
        #expect(violations.count == 2)
        #expect(violations.contains { $0.hasPrefix("/items/1/id:") })
        #expect(violations.contains { $0.hasPrefix("/items/2:") && $0.contains("\"id\" is missing") })
    }

    @Test func reportsWhatItCannotCheck() throws {
        let violations = JSONSchema(["multipleOf": 2]).validate(3)
        #expect(violations.count == 1 && violations[0].contains("multipleOf"), "\(violations)")
        #expect(!JSONSchema(["$ref": "#/nowhere"]).validate(1).isEmpty)
    }

    @Test func reactorSchemaDescribesEachCase() throws {
        let schema = ReactorSchema(
            actions: [
                .action("add", "Add one.", ["title": .string(), "tag": JSONSchema.string().orNull], optional: ["tag"]),
                .action("clear"),
            ],
            state: .object(["items": .array(.string())]))
        #expect(
            schema.action(named: "add")?.schema.json.serializedString()
                == #"{"type":"object","title":"add","description":"Add one.","required":["type","title"],"#
                + #""properties":{"type":{"const":"add"},"title":{"type":"string"},"#
                + #""tag":{"type":["string","null"]}}}"#
        )
        let valid = [
            #"{"type":"add","title":"milk"}"#, #"{"type":"add","title":"milk","tag":null,"other":1}"#,
            #"{"type":"clear"}"#,
        ]
        let invalid = [#"{"type":"add"}"#, #"{"type":"add","title":1}"#, #"{"type":"drop"}"#, #"{"title":"x"}"#, "[]"]
        for text in valid { #expect(schema.actionSchema.validate(try Self.parse(text)).isEmpty, "\(text)") }
        for text in invalid { #expect(!schema.actionSchema.validate(try Self.parse(text)).isEmpty, "\(text)") }
    }
}
