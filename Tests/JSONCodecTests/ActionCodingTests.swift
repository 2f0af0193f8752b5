import JSONCodec
import Testing

enum CounterAction: Codable, Sendable, Equatable {
    enum Color: Codable, Sendable, Equatable { case rgb(red: UInt8, green: UInt8, blue: UInt8), named(String) }
    case increase
    case paint(color: Color)
    case decrease
    case follow(userID: Int)
    case add(String, Int)
    case rename(name: String, note: String?)
}

/// Hand-written Codable with a "type" key, as examples may write it.
enum HandWrittenAction: Codable, Sendable, Equatable {
    case increase
    case setValue(Int)

    enum CodingKeys: String, CodingKey { case type, value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "increase": self = .increase
        case "setValue": self = .setValue(try container.decode(Int.self, forKey: .value))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown type \(other)")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .increase: try container.encode("increase", forKey: .type)
        case .setValue(let value):
            try container.encode("setValue", forKey: .type)
            try container.encode(value, forKey: .value)
        }
    }
}

/// Hand-written with a catch-all decode: only `ActionCaseNames` tells unknown types apart.
enum LenientAction: Decodable, Sendable, Equatable, ActionCaseNames {
    case named(String)
    static let actionCaseNames = ["start", "stop"]
    enum CodingKeys: String, CodingKey { case type }
    init(from decoder: any Decoder) throws {
        self = .named(try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .type))
    }
}

/// The examples' style: a dynamic key type that accepts any member name.
struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

enum DynamicKeyAction: Codable, Sendable, Equatable {
    case add(title: String)
    case clear

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DynamicKey.self)
        let type = try container.decode(String.self, forKey: DynamicKey("type"))
        switch type {
        case "add": self = .add(title: try container.decode(String.self, forKey: DynamicKey("title")))
        case "clear": self = .clear
        default:
            throw DecodingError.dataCorruptedError(
                forKey: DynamicKey("type"), in: container, debugDescription: "unknown action type \(type)")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DynamicKey.self)
        switch self {
        case .add(let title):
            try container.encode("add", forKey: DynamicKey("type"))
            try container.encode(title, forKey: DynamicKey("title"))
        case .clear:
            try container.encode("clear", forKey: DynamicKey("type"))
        }
    }
}

/// Same wire shape but not Sendable-checked: exercises the general (uncached) overload.
final class NonSendableBox: Decodable {
    let type: String
}

/// How the service calls it: generic over a reactor's Action, with and without `Sendable` known.
func decodeSendable<A: Decodable & Sendable>(_ type: A.Type, _ body: [UInt8]) throws(ActionDecodingError) -> A {
    try decodeAction(type, from: body)
}

func decodeAnyDecodable<A: Decodable>(_ type: A.Type, _ body: ArraySlice<UInt8>) throws(ActionDecodingError) -> A {
    try decodeAction(type, from: body)
}

@Suite struct ActionCodingTests {
    @Test(arguments: [
        (CounterAction.increase, #"{"type":"increase"}"#),
        (.decrease, #"{"type":"decrease"}"#),
        (.follow(userID: 7), #"{"type":"follow","userID":7}"#),
        (.add("x", 2), #"{"type":"add","_0":"x","_1":2}"#),
        (.rename(name: "a", note: nil), #"{"type":"rename","name":"a"}"#),
        (.rename(name: "a", note: "n"), #"{"type":"rename","name":"a","note":"n"}"#),
        (
            .paint(color: .rgb(red: 1, green: 2, blue: 3)),
            #"{"type":"paint","color":{"type":"rgb","red":1,"green":2,"blue":3}}"#
        ),
        (.paint(color: .named("teal")), #"{"type":"paint","color":{"type":"named","_0":"teal"}}"#),
    ])
    func synthesizedEnumRoundTripsInWireShape(action: CounterAction, wire: String) throws {
        #expect(String(decoding: try encodeAction(action), as: UTF8.self) == wire)
        #expect(try decodeAction(CounterAction.self, from: Array(wire.utf8)) == action)
        // Twice: the second bare decode comes from the cache.
        #expect(try decodeAction(CounterAction.self, from: Array(wire.utf8)) == action)
    }

    @Test func handWrittenCodableKeepsWorking() throws {
        #expect(
            try decodeAction(HandWrittenAction.self, from: Array(#"{"type":"setValue","value":3}"#.utf8))
                == .setValue(3))
        #expect(try decodeAction(HandWrittenAction.self, from: Array(#"{"type":"increase"}"#.utf8)) == .increase)
        #expect(
            String(decoding: try encodeAction(HandWrittenAction.setValue(3)), as: UTF8.self)
                == #"{"type":"setValue","value":3}"#)
    }

    @Test(arguments: [
        (#"{"type":"jump"}"#, ActionDecodingError.unknownType("jump")),
        (#"{"type":"jump","x":1}"#, .unknownType("jump")),
        (#"{"kind":"increase"}"#, .missingType),
        (#"{"type":3}"#, .typeNotString),
        (#"[1]"#, .notAnObject),
        (#"{"type":"follow"}"#, .invalidPayload(type: "follow", field: "userID", message: #"missing field "userID""#)),
        (
            #"{"type":"follow","userID":"x"}"#,
            .invalidPayload(type: "follow", field: "userID", message: #""userID": expected an integer, found "x""#)
        ),
        (
            #"{"type":"paint","color":{"type":"hsl"}}"#,
            .invalidPayload(type: "paint", field: "color.type", message: #""color.type": unknown case "hsl""#)
        ),
        (
            #"{"type":"paint","color":{"type":"rgb","red":1,"green":300,"blue":0}}"#,
            .invalidPayload(
                type: "paint", field: "color.green",
                message: #""color.green": expected an integer in UInt8's range (0...255), found 300"#)
        ),
    ])
    func errorsNameTheTypeOrField(body: String, expected: ActionDecodingError) {
        #expect(throws: expected) { try decodeAction(CounterAction.self, from: Array(body.utf8)) }
    }

    @Test func handWrittenUnknownTypeIsUnknownAction() {
        #expect(throws: ActionDecodingError.unknownType("jump")) {
            try decodeAction(HandWrittenAction.self, from: Array(#"{"type":"jump"}"#.utf8))
        }
    }

    @Test func invalidJSONKeepsParserError() throws {
        let error = try #require(throws: ActionDecodingError.self) {
            try decodeAction(CounterAction.self, from: Array("{".utf8))
        }
        #expect(error.code == "invalid_json")
        #expect(!error.isUnknownAction)
    }

    @Test func messagesAndCodes() {
        #expect(ActionDecodingError.unknownType("jump").message == #"unknown action type "jump""#)
        #expect(ActionDecodingError.unknownType("jump").code == "unknown_action")
        let payload = ActionDecodingError.invalidPayload(
            type: "follow", field: "userID", message: #"missing field "userID""#)
        #expect(payload.message == #"invalid "follow" action: missing field "userID""#)
        #expect(payload.code == "invalid_action")
    }

    @Test func nonSendableTypesDecodeThroughTheGeneralPath() throws {
        #expect(try decodeAction(NonSendableBox.self, from: Array(#"{"type":"x"}"#.utf8)).type == "x")
    }

    @Test func caseNamesSeparateUnknownTypesBeforeDecoding() throws {
        #expect(try decodeAction(LenientAction.self, from: Array(#"{"type":"start"}"#.utf8)) == .named("start"))
        #expect(throws: ActionDecodingError.unknownType("jump")) {
            try decodeAction(LenientAction.self, from: Array(#"{"type":"jump"}"#.utf8))
        }
        #expect(throws: ActionDecodingError.unknownType("jump")) {
            try decodeAction(LenientAction.self, from: Array(#"{"type":"jump","x":[1]}"#.utf8))
        }
    }

    @Test(arguments: [
        " { \"type\" : \"increase\" } \n",
        #"{"type":"incr\u0065ase"}"#,
        #"{"type":"increase","extra":true}"#,
        #"{"extra":null,"type":"increase"}"#,
    ])
    func bareActionsInOtherSpellings(body: String) throws {
        #expect(try decodeAction(CounterAction.self, from: Array(body.utf8)) == .increase)
        #expect(try decodeAction(CounterAction.self, from: body.utf8) == .increase)
    }

    @Test(arguments: [
        #"{"type":"increase""#,
        #"{"type":"increase"}}"#,
        #"{"type":"increase",}"#,
        "{\"type\":\"incr\u{1}ease\"}",
        #"{"type":"increase","type":"decrease"}"#,
    ])
    func almostBareBodiesAreStillInvalidJSON(body: String) throws {
        let error = try #require(throws: ActionDecodingError.self) {
            try decodeAction(CounterAction.self, from: Array(body.utf8))
        }
        #expect(error.code == "invalid_json")
    }

    @Test func decodesFromAParsedValue() throws {
        let value: JSONValue = ["type": "rename", "name": "n"]
        #expect(try decodeAction(CounterAction.self, from: value) == .rename(name: "n", note: nil))
    }

    @Test func encodeActionRefusesNonObjects() {
        #expect(throws: EncodingError.self) { try encodeAction(5) }
        #expect(throws: EncodingError.self) { try encodeAction(["type": 1]) }
    }

    @Test func genericCallersGetTheSameResults() throws {
        #expect(try decodeSendable(CounterAction.self, Array(#"{"type":"decrease"}"#.utf8)) == .decrease)
        #expect(try decodeAnyDecodable(CounterAction.self, Array(#"{"type":"decrease"}"#.utf8)[...]) == .decrease)
        #expect(throws: ActionDecodingError.unknownType("x")) {
            try decodeSendable(CounterAction.self, Array(#"{"type":"x"}"#.utf8))
        }
    }

    /// The bare-action cache is shared: many tasks decoding at once must each get the right case.
    @Test func concurrentDecodesAgree() async throws {
        let bodies: [(String, CounterAction)] = [
            (#"{"type":"increase"}"#, .increase), (#"{"type":"decrease"}"#, .decrease),
            (#"{"type":"follow","userID":3}"#, .follow(userID: 3)),
        ]
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<500 {
                        let (body, expected) = bodies[(task + round) % bodies.count]
                        if (try? decodeAction(CounterAction.self, from: Array(body.utf8))) != expected {
                            mismatches += 1
                        }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test func aCaseNamedTypeStillRoundTrips() throws {
        enum Odd: Codable, Sendable, Equatable { case type(String), other }
        #expect(String(decoding: try encodeAction(Odd.type("x")), as: UTF8.self) == #"{"type":"type","_0":"x"}"#)
        #expect(try decodeAction(Odd.self, from: try encodeAction(Odd.type("x"))) == .type("x"))
        #expect(try decodeAction(Odd.self, from: try encodeAction(Odd.other)) == .other)
    }

    @Test func dynamicKeyActionsDecodeAsWritten() throws {
        #expect(
            try decodeAction(DynamicKeyAction.self, from: Array(#"{"type":"add","title":"milk"}"#.utf8))
                == .add(title: "milk"))
        #expect(try decodeAction(DynamicKeyAction.self, from: Array(#"{"type":"clear"}"#.utf8)) == .clear)
        #expect(
            String(decoding: try encodeAction(DynamicKeyAction.add(title: "m")), as: UTF8.self)
                == #"{"type":"add","title":"m"}"#)
        #expect(throws: ActionDecodingError.unknownType("jump")) {
            try decodeAction(DynamicKeyAction.self, from: Array(#"{"type":"jump"}"#.utf8))
        }
        #expect(
            throws: ActionDecodingError.invalidPayload(type: "add", field: "title", message: #"missing field "title""#)
        ) {
            try decodeAction(DynamicKeyAction.self, from: Array(#"{"type":"add"}"#.utf8))
        }
    }

    /// Renamed case keys and payload labels (SE-0295) keep the wire shape, with the renamed names.
    @Test func renamedCaseKeysKeepTheWireShape() throws {
        enum Renamed: Codable, Sendable, Equatable {
            case setValue(newValue: Int)
            case reset
            enum CodingKeys: String, CodingKey {
                case setValue = "set_value"
                case reset
            }
            enum SetValueCodingKeys: String, CodingKey { case newValue = "new_value" }
        }
        let wire = #"{"type":"set_value","new_value":3}"#
        #expect(String(decoding: try encodeAction(Renamed.setValue(newValue: 3)), as: UTF8.self) == wire)
        #expect(try decodeAction(Renamed.self, from: Array(wire.utf8)) == .setValue(newValue: 3))
        #expect(try decodeAction(Renamed.self, from: Array(#"{"type":"reset"}"#.utf8)) == .reset)
        #expect(throws: ActionDecodingError.unknownType("setValue")) {
            try decodeAction(Renamed.self, from: Array(#"{"type":"setValue","new_value":3}"#.utf8))
        }
    }
}
