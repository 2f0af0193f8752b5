import JSONCodec
import Testing

struct Todo: Codable, Equatable {
    var id: Int
    var title: String
    var done: Bool
    var note: String?
    var tags: [String]
}

struct TodoState: Codable, Equatable {
    enum Filter: String, Codable { case all, active, completed }
    var todos: [Todo]
    var filter: Filter
    var counts: [String: Int]
    var byID: [Int: String]
    var matrix: [[Double]]
    var optionalList: [Int?]
    var nested: Nested?

    struct Nested: Codable, Equatable {
        var level: UInt8
        var ratio: Float
        var big: UInt64
        var small: Int8
    }
}

/// An enum with payloads nested inside a state: written in the wire shape too.
struct Shape: Codable, Equatable {
    enum Kind: Codable, Equatable {
        case circle(radius: Double)
        case square(side: Int)
        case empty
    }
    var kinds: [Kind]
    var current: Kind?
}

/// Stands in for a `@Pulse`-style wrapper: encodes as its wrapped value, by itself.
@propertyWrapper
struct Wrapped<Value: Codable & Equatable>: Codable, Equatable {
    var wrappedValue: Value
    init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
    init(from decoder: any Decoder) throws { wrappedValue = try decoder.singleValueContainer().decode(Value.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

struct WithWrapper: Codable, Equatable {
    var value: Int
    @Wrapped var message: String
}

/// Reads a field with a default, catching the standard `keyNotFound` as hand-written code does.
struct Defaulted: Decodable, Equatable {
    var count: Int
    enum CodingKeys: String, CodingKey { case count }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do { count = try container.decode(Int.self, forKey: .count) } catch DecodingError.keyNotFound { count = 10 }
    }
}

class Base: Codable {
    var a: Int
    init(a: Int) { self.a = a }
}

final class Derived: Base {
    var b: Int
    init(a: Int, b: Int) {
        self.b = b
        super.init(a: a)
    }
    enum CodingKeys: String, CodingKey { case b }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        b = try container.decode(Int.self, forKey: .b)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(b, forKey: .b)
        try super.encode(to: container.superEncoder())
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

@Suite struct JSONValueCodableTests {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()

    func text<T: Encodable>(_ value: T) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }

    @Test func smallStructIsOneLineInDeclarationOrder() throws {
        struct Counter: Codable {
            var value: Int
            var label: String
        }
        #expect(try text(Counter(value: 42, label: "x")) == #"{"value":42,"label":"x"}"#)
    }

    @Test func stateRoundTrips() throws {
        let state = TodoState(
            todos: [
                Todo(id: 1, title: "milk \"2%\"\n", done: false, note: nil, tags: []),
                Todo(id: 2, title: "é 😀", done: true, note: "n", tags: ["a", "b"]),
            ],
            filter: .active, counts: ["all": 2], byID: [1: "milk"], matrix: [[1.5, -0.25], []],
            optionalList: [1, nil, 3],
            nested: .init(level: 255, ratio: 0.5, big: .max, small: -128))
        let bytes = try encoder.encode(state)
        #expect(try decoder.decode(TodoState.self, from: bytes) == state)
        let value = try encoder.encodeValue(state)
        #expect(value["todos"]?[0]?["note"] == nil)
        #expect(value["nested"]?["big"] == .number(.uint(.max)))
        #expect(value["byID"]?["1"] == "milk")
        #expect(value["optionalList"] == [1, nil, 3])
    }

    @Test func nestedEnumsUseTheWireShape() throws {
        let shape = Shape(kinds: [.circle(radius: 1.5), .square(side: 2), .empty], current: nil)
        #expect(
            try text(shape)
                == #"{"kinds":[{"type":"circle","radius":1.5},{"type":"square","side":2},{"type":"empty"}]}"#)
        #expect(try decoder.decode(Shape.self, from: try encoder.encode(shape)) == shape)
    }

    @Test func propertyWrappersEncodeAsTheirValue() throws {
        let value = WithWrapper(value: 1, message: "hi")
        #expect(try text(value) == #"{"value":1,"message":"hi"}"#)
        #expect(try decoder.decode(WithWrapper.self, from: Array(#"{"value":1,"message":"hi"}"#.utf8)) == value)
    }

    @Test func superEncoderAndDecoderNestUnderSuper() throws {
        #expect(try text(Derived(a: 1, b: 2)) == #"{"b":2,"super":{"a":1}}"#)
        let decoded = try decoder.decode(Derived.self, from: Array(#"{"b":2,"super":{"a":1}}"#.utf8))
        #expect(decoded.a == 1 && decoded.b == 2)
    }

    @Test func handWrittenCodeCanCatchKeyNotFound() throws {
        #expect(try decoder.decode(Defaulted.self, from: Array("{}".utf8)).count == 10)
        #expect(try decoder.decode(Defaulted.self, from: Array(#"{"count":3}"#.utf8)).count == 3)
    }

    @Test func jsonValueMembersPassThroughExactly() throws {
        struct Entry: Codable, Equatable {
            var seq: Int
            var action: JSONValue
        }
        let entry = Entry(seq: 1, action: ["type": "follow", "userID": .number(.uint(.max))])
        #expect(try text(entry) == #"{"seq":1,"action":{"type":"follow","userID":18446744073709551615}}"#)
        #expect(try decoder.decode(Entry.self, from: try encoder.encode(entry)) == entry)
    }

    @Test func topLevelScalarsAndCollections() throws {
        #expect(try text(5) == "5")
        #expect(try text("a\u{1}") == #""a\u0001""#)
        #expect(try text([1, 2]) == "[1,2]")
        #expect(try text(["k": true]) == #"{"k":true}"#)
        #expect(try text(Optional<Int>.none) == "null")
        #expect(try decoder.decode([Int?].self, from: Array("[null,1]".utf8)) == [nil, 1])
        #expect(try decoder.decode(Double.self, from: Array("3".utf8)) == 3)
        #expect(try decoder.decode(Int.self, from: Array("3.0".utf8)) == 3)
        #expect(try decoder.decode(Int.self, from: Array("1e3".utf8)) == 1000)
    }

    @Test func floatsWriteTheirShortestText() throws {
        struct Box: Codable, Equatable {
            var f: Float
            var g: [Float]
        }
        let box = Box(f: 0.1, g: [1.1, -3.4028235e38, .leastNonzeroMagnitude])
        #expect(try text(box) == #"{"f":0.1,"g":[1.1,-3.4028235e+38,1e-45]}"#)
        #expect(try decoder.decode(Box.self, from: try encoder.encode(box)) == box)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteDoublesDoNotEncode(value: Double) {
        struct Box: Encodable { var x: Double }
        #expect(throws: EncodingError.self) { try encoder.encode(Box(x: value)) }
        #expect(throws: EncodingError.self) { try encoder.encode([value]) }
    }

    /// Integers are taken exactly as written, also at the edges and in double form below 2^53.
    @Test(arguments: [
        (#"{"value":9223372036854775807}"#, Int.max),
        (#"{"value":-9223372036854775808}"#, Int.min),
        (#"{"value":4.0}"#, 4),
        (#"{"value":-2.5e1}"#, -25),
        (#"{"value":9007199254740991.0}"#, 9_007_199_254_740_991),
    ])
    func integersDecodeExactly(body: String, value: Int) throws {
        struct Counter: Decodable { var value: Int }
        #expect(try decoder.decode(Counter.self, from: Array(body.utf8)).value == value)
    }

    /// Messages name the field (as a path on the wire) and say what was expected and found.
    @Test(arguments: [
        (#"{"value":"x"}"#, #""value": expected an integer, found "x""#, "value"),
        (#"{}"#, #"missing field "value""#, "value"),
        (#"{"value":1.5}"#, #""value": expected an integer, found 1.5"#, "value"),
        (#"{"value":null}"#, #""value": expected an integer, found null"#, "value"),
        (
            #"{"value":99999999999999999999}"#,
            #""value": expected an integer in Int's range (-9223372036854775808...9223372036854775807), found 1e+20"#,
            "value"
        ),
        // Read as doubles that round into Int's range: refused rather than taken as a neighbouring integer.
        (
            #"{"value":-9223372036854775809}"#,
            #""value": expected an integer in Int's range (-9223372036854775808...9223372036854775807) "#
                + #"written exactly (from 2^53 on, as a plain integer without fraction or exponent), "#
                + #"found -9.223372036854776e+18"#,
            "value"
        ),
        (
            #"{"value":9007199254740993.0}"#,
            #""value": expected an integer in Int's range (-9223372036854775808...9223372036854775807) "#
                + #"written exactly (from 2^53 on, as a plain integer without fraction or exponent), "#
                + #"found 9007199254740992.0"#,
            "value"
        ),
        (
            #"{"value":1e18}"#,
            #""value": expected an integer in Int's range (-9223372036854775808...9223372036854775807) "#
                + #"written exactly (from 2^53 on, as a plain integer without fraction or exponent), "#
                + #"found 1e+18"#,
            "value"
        ),
    ])
    func decodingErrorsNameTheField(body: String, message: String, field: String) throws {
        struct Counter: Decodable { var value: Int }
        let error = try #require(throws: JSONDecodingError.self) {
            try decoder.decode(Counter.self, from: Array(body.utf8))
        }
        #expect(error.message == message)
        #expect(error.field == field)
    }

    @Test(arguments: [
        (
            #"{"todos":[{"id":1,"title":"a","done":false,"tags":[]},{"id":2,"done":true,"tags":[]}],"#
                + #""filter":"all","counts":{},"byID":{},"matrix":[],"optionalList":[]}"#,
            #"missing field "todos[1].title""#
        ),
        (
            #"{"todos":[{"id":1,"title":"a","done":"no","tags":[]}],"#
                + #""filter":"all","counts":{},"byID":{},"matrix":[],"optionalList":[]}"#,
            #""todos[0].done": expected a boolean, found "no""#
        ),
        (
            #"{"todos":[],"filter":"all","counts":{"a":"1"},"byID":{},"matrix":[],"optionalList":[]}"#,
            #""counts.a": expected an integer, found "1""#
        ),
        (
            #"{"todos":[],"filter":"some","counts":{},"byID":{},"matrix":[],"optionalList":[]}"#,
            #""filter": Cannot initialize Filter from invalid String value some"#
        ),
        (
            #"{"todos":[],"filter":"all","counts":{},"byID":{},"matrix":[[1],["x"]],"optionalList":[]}"#,
            #""matrix[1][0]": expected a number, found "x""#
        ),
        (
            #"{"todos":{},"filter":"all","counts":{},"byID":{},"matrix":[],"optionalList":[]}"#,
            #""todos": expected an array, found an object"#
        ),
        (
            #"{"todos":[],"filter":"all","counts":{},"byID":{},"matrix":[],"optionalList":[],"#
                + #""nested":{"level":256,"ratio":1,"big":1,"small":1}}"#,
            #""nested.level": expected an integer in UInt8's range (0...255), found 256"#
        ),
        (#"[]"#, #"expected an object, found an array"#),
    ])
    func nestedErrorsNameThePath(body: String, message: String) throws {
        let error = try #require(throws: JSONDecodingError.self) {
            try decoder.decode(TodoState.self, from: Array(body.utf8))
        }
        #expect(error.message == message)
    }

    @Test func nestedEnumErrorsNameTheWireField() throws {
        let error = try #require(throws: JSONDecodingError.self) {
            try decoder.decode(Shape.self, from: Array(#"{"kinds":[{"type":"circle","radius":"big"}]}"#.utf8))
        }
        #expect(error.message == #""kinds[0].radius": expected a number, found "big""#)
    }

    @Test(arguments: [
        (#"{"kinds":[{"type":"hexagon"}]}"#, #""kinds[0].type": unknown case "hexagon""#),
        (#"{"kinds":[{"radius":1}]}"#, #"missing field "kinds[0].type""#),
        (#"{"kinds":[{"type":1}]}"#, #""kinds[0].type": expected a string naming the case, found 1"#),
        (#"{"kinds":[],"current":{"type":"empty","extra":1}}"#, nil),
        (#"{"kinds":[{"circle":{"radius":2}}]}"#, nil),
    ])
    func nestedEnumCaseErrorsSpeakTheWireShape(body: String, message: String?) throws {
        if let message {
            let error = try #require(throws: JSONDecodingError.self) {
                try decoder.decode(Shape.self, from: Array(body.utf8))
            }
            #expect(error.message == message)
        } else {
            // Extra members are ignored, and the old nested shape still reads:
            // decoding is lenient, writing is canonical.
            #expect(throws: Never.self) { try decoder.decode(Shape.self, from: Array(body.utf8)) }
        }
    }

    /// Only synthesized per-case keys open the payload;
    /// a struct's own nested member named like the "type" stays itself.
    @Test func wireEnumDetectionLeavesStructsAlone() throws {
        struct Inner: Codable, Equatable { var x: Int }
        struct Holder: Decodable, Equatable {
            var inner: Inner
            enum CodingKeys: String, CodingKey { case inner }
            enum InnerKeys: String, CodingKey { case x }
            init(inner: Inner) { self.inner = inner }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                let nested = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
                inner = Inner(x: try nested.decode(Int.self, forKey: .x))
            }
        }
        let body = #"{"type":"inner","inner":{"x":5},"x":9}"#
        #expect(try decoder.decode(Holder.self, from: Array(body.utf8)) == Holder(inner: Inner(x: 5)))
        enum Wrapper: Codable, Equatable { case inner(inner: Inner) }
        let wrapped = Wrapper.inner(inner: Inner(x: 1))
        #expect(try text(wrapped) == #"{"type":"inner","inner":{"x":1}}"#)
        #expect(try decoder.decode(Wrapper.self, from: try encoder.encode(wrapped)) == wrapped)
    }

    @Test func longStringsAreCutShortInMessages() throws {
        let long = String(repeating: "a", count: 100)
        let error = try #require(throws: JSONDecodingError.self) {
            try decoder.decode(Int.self, from: JSONValue.string(long))
        }
        #expect(error.message == "expected an integer, found \"" + String(repeating: "a", count: 40) + "…\"")
    }

    /// A dictionary (or any dynamic key type) with a "type" member reads every member as itself.
    @Test(arguments: [
        #"{"type":"b","a":"1"}"#, #"{"type":"a","a":"1"}"#, #"{"type":"type"}"#, #"{"a":"x","type":"zz"}"#,
    ])
    func dictionariesWithATypeMemberStayDictionaries(body: String) throws {
        let expected = try #require(try JSONParser().parse(Array(body.utf8)).objectValue)
        let decoded = try decoder.decode([String: String].self, from: Array(body.utf8))
        #expect(decoded.count == expected.count)
        for (key, value) in expected { #expect(decoded[key].map(JSONValue.string) == value) }
    }

    @Test func payloadLabelledTypeCannotBeWritten() {
        enum Clashing: Encodable { case set(type: String) }
        #expect(throws: EncodingError.self) { try encoder.encode(Clashing.set(type: "x")) }
    }

    @Test func bigDictionariesEncodeAndDecode() throws {
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<500).map { ("key\($0)", $0) })
        let bytes = try encoder.encode(dictionary)
        #expect(try decoder.decode([String: Int].self, from: bytes) == dictionary)
        #expect(try JSONParser().parse(bytes).objectValue?.count == 500)
    }

    @Test func repeatedKeysKeepTheLastValue() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                for round in 0..<2 {
                    for index in 0..<20 {
                        try container.encode(round * 100 + index, forKey: AnyKey(stringValue: "k\(index)"))
                    }
                }
            }
        }
        let value = try encoder.encodeValue(Twice())
        #expect(value.objectValue?.count == 20)
        #expect(value["k0"] == 100)
        #expect(value["k19"] == 119)
        #expect(value.objectValue?.keys.first == "k0")
    }

    @Test func decodingFromBytesReportsParseErrors() {
        #expect(throws: JSONParseError.self) { try decoder.decode(Int.self, from: Array("[".utf8)) }
    }
}

/// `overlaid(on:)`: stored data over a newer type's initial value, so added fields take their initial values.
@Suite struct JSONValueOverlayTests {
    static func parse(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

    @Test(arguments: [
        (#"{"home":3}"#, #"{"home":0,"away":0}"#, #"{"home":3,"away":0}"#),
        (
            #"{"team":{"name":"A"},"x":1}"#, #"{"team":{"name":"","color":"red"}}"#,
            #"{"team":{"name":"A","color":"red"},"x":1}"#
        ),
        (#"{"items":[{"a":1}]}"#, #"{"items":[{"a":0,"b":0}]}"#, #"{"items":[{"a":1}]}"#),
        (#"{"maybe":null}"#, #"{"maybe":5}"#, #"{"maybe":null}"#),
        (#"{"kind":"x"}"#, #"{"kind":{"nested":true}}"#, #"{"kind":"x"}"#),
        (#"[1,2]"#, #"{"a":1}"#, #"[1,2]"#),
        (#"{}"#, #"{"a":{"b":{"c":1}}}"#, #"{"a":{"b":{"c":1}}}"#),
    ])
    func storedMembersWinAndMissingOnesComeFromTheTemplate(stored: String, template: String, expected: String) throws {
        let merged = try Self.parse(stored).overlaid(on: try Self.parse(template))
        #expect(merged == (try Self.parse(expected)), "\(merged.serializedString())")
    }

    @Test func aStateWithAnAddedFieldDecodesFromOlderDataOverItsInitialValue() throws {
        struct Team: Codable, Equatable {
            var name: String
            var color = "red"
        }
        struct State: Codable, Equatable {
            var home: Int
            var away = 0
            var team: Team
        }
        let initial = State(home: 0, team: Team(name: ""))
        let stored = try Self.parse(#"{"home":3,"team":{"name":"A"}}"#)
        #expect(throws: JSONDecodingError.self) { try JSONValueDecoder().decode(State.self, from: stored) }
        let template = try JSONValueEncoder().encodeValue(initial)
        let decoded = try JSONValueDecoder().decode(State.self, from: stored.overlaid(on: template))
        #expect(decoded == State(home: 3, away: 0, team: Team(name: "A", color: "red")))
    }
}
