// JSONCodec benchmark: ns/op of our hot-path operations next to Foundation's JSONDecoder/JSONEncoder
// on the same inputs. Built and run by bench.sh in release; prints numbers, asserts nothing.
import Foundation
import JSONCodec

/// Synthesized Codable: decoded by us in the wire shape.
enum Action: Codable, Sendable {
    case increase
    case decrease
    case follow(userID: Int)
}

/// The same wire shape, hand-written, so Foundation can decode the same bytes.
enum HandAction: Codable, Sendable {
    case increase
    case decrease
    case follow(userID: Int)

    enum CodingKeys: String, CodingKey { case type, userID }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "increase": self = .increase
        case "decrease": self = .decrease
        case "follow": self = .follow(userID: try container.decode(Int.self, forKey: .userID))
        default: throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown type")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .increase: try container.encode("increase", forKey: .type)
        case .decrease: try container.encode("decrease", forKey: .type)
        case .follow(let userID):
            try container.encode("follow", forKey: .type)
            try container.encode(userID, forKey: .userID)
        }
    }
}

struct CounterState: Codable { var value: Int }

struct Todo: Codable {
    var id: Int
    var title: String
    var done: Bool
    var tags: [String]
}

struct TodoState: Codable {
    var todos: [Todo]
    var filter: String
    var editing: Int?
}

@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Best of five runs of `iterations` calls, in ns per call.
func measure(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<5 {
        let start = ContinuousClock.now
        for _ in 0..<iterations { try body() }
        let elapsed = ContinuousClock.now - start
        let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        best = min(best, ns / Double(iterations))
    }
    return best
}

func row(_ name: String, ours: Double, foundation: Double?) {
    let pad = name.padding(toLength: 50, withPad: " ", startingAt: 0)
    if let foundation {
        print(
            "\(pad) ours \(String(format: "%9.1f", ours)) ns/op   "
                + "Foundation \(String(format: "%9.1f", foundation)) ns/op   "
                + "x\(String(format: "%.1f", foundation / ours))"
        )
    } else {
        print("\(pad) ours \(String(format: "%9.1f", ours)) ns/op")
    }
}

let increase = Array(#"{"type":"increase"}"#.utf8)
let follow = Array(#"{"type":"follow","userID":7}"#.utf8)
let increaseData = Data(increase)
let followData = Data(follow)
let todoState = TodoState(
    todos: (0..<20).map {
        Todo(id: $0, title: "Todo number \($0) with some text", done: $0 % 3 == 0, tags: ["home", "t\($0)"])
    },
    filter: "active", editing: nil)
let foundationDecoder = JSONDecoder()
let foundationEncoder = JSONEncoder()
let todoBytes = try foundationEncoder.encode(todoState)
let todoArray = Array(todoBytes)
let ourDecoder = JSONValueDecoder()
let ourEncoder = JSONValueEncoder()
let n = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200_000 : 200_000

print("JSONCodec bench (\(n) iterations, best of 5)")
let increaseOurs = try measure(n) { consume(try decodeAction(Action.self, from: increase)) }
row(
    #"decode {"type":"increase"} (synthesized, cached)"#,
    ours: increaseOurs,
    foundation: try measure(n) { consume(try foundationDecoder.decode(HandAction.self, from: increaseData)) })
row(
    #"decode {"type":"increase"} (hand-written)"#,
    ours: try measure(n) { consume(try decodeAction(HandAction.self, from: increase)) },
    foundation: nil)
row(
    #"decode {"type":"follow","userID":7}"#,
    ours: try measure(n) { consume(try decodeAction(Action.self, from: follow)) },
    foundation: try measure(n) { consume(try foundationDecoder.decode(HandAction.self, from: followData)) })
row(
    #"encode action follow(userID: 7)"#,
    ours: try measure(n) { consume(try encodeAction(Action.follow(userID: 7))) },
    foundation: try measure(n) { consume(try foundationEncoder.encode(HandAction.follow(userID: 7))) })
let counterOurs = try measure(n) { consume(try ourEncoder.encode(CounterState(value: 42))) }
row(
    #"encode state {"value":42}"#,
    ours: counterOurs,
    foundation: try measure(n) { consume(try foundationEncoder.encode(CounterState(value: 42))) })
row(
    "encode todo state (20 todos, \(todoBytes.count) B)",
    ours: try measure(n / 20) { consume(try ourEncoder.encode(todoState)) },
    foundation: try measure(n / 20) { consume(try foundationEncoder.encode(todoState)) })
row(
    "decode todo state (20 todos, \(todoBytes.count) B)",
    ours: try measure(n / 20) { consume(try ourDecoder.decode(TodoState.self, from: todoArray)) },
    foundation: try measure(n / 20) { consume(try foundationDecoder.decode(TodoState.self, from: todoBytes)) })
row(
    "parse todo state to a tree (JSONSerialization)",
    ours: try measure(n / 20) { consume(try JSONParser().parse(todoArray)) },
    foundation: try measure(n / 20) { consume(try JSONSerialization.jsonObject(with: todoBytes)) })
let tree = try JSONParser().parse(todoArray)
row(
    "serialize todo tree",
    ours: measure(n / 20) { consume(tree.serialized()) },
    foundation: nil)
print(
    "targets: decode {\"type\":\"increase\"} ≤ 500 ns: \(increaseOurs <= 500 ? "met" : "MISSED") "
        + "(\(Int(increaseOurs)) ns); "
        + "encode {\"value\":42} ≤ 1000 ns: \(counterOurs <= 1000 ? "met" : "MISSED") (\(Int(counterOurs)) ns)")
