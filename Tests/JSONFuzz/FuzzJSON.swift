// libFuzzer entry point for JSONCodec, compiled together with the module's sources by fuzz.sh
// (not a SwiftPM target). Any crash, or a broken invariant below, stops the fuzzer with the input.

enum FuzzAction: Codable, Sendable, Equatable {
    case increase
    case follow(userID: Int)
    case add(String, Int)
    case rename(name: String, note: String?)
    case nested(items: [FuzzItem])
}

struct FuzzItem: Codable, Sendable, Equatable {
    var id: UInt8
    var title: String
    var tags: [String: Double]?
    var labels: [String: String]?
}

struct FuzzState: Codable, Equatable {
    var value: Int
    var items: [FuzzItem]
    var last: FuzzAction?
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    checkParser(bytes)
    checkActions(bytes)
    checkPointer(bytes)
    return 0
}

/// Whatever parses must write back to text that parses to an equal value, and writing is a fixed point.
func checkParser(_ bytes: UnsafeBufferPointer<UInt8>) {
    let parser = JSONParser(maxDepth: 32, maxBytes: 1 << 16)
    let value: JSONValue
    do {
        value = try parser.parse(bytes)
    } catch {
        precondition(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside input")
        precondition(!error.message.isEmpty)
        return
    }
    let written = value.serialized()
    guard let reparsed = try? JSONParser(maxDepth: 32, maxBytes: 1 << 20).parse(written) else {
        preconditionFailure("written form does not parse: \(value.serializedString())")
    }
    precondition(reparsed == value, "round trip changed the value: \(value) vs \(reparsed)")
    precondition(reparsed.serialized() == written, "writing is not a fixed point")
    precondition(reparsed.hashValue == value.hashValue)
    // Any object reads as a dictionary of all its members, whatever its "type" member says.
    if case .object(let object) = value {
        guard let dictionary = try? JSONValueDecoder().decode([String: JSONValue].self, from: value) else {
            preconditionFailure("object did not decode as a dictionary: \(value)")
        }
        precondition(dictionary.count == object.count, "dictionary lost members")
        for (key, member) in object { precondition(dictionary[key] == member, "dictionary changed member \(key)") }
    }
    if let state = try? JSONValueDecoder().decode(FuzzState.self, from: value) {
        let encoded = try! JSONValueEncoder().encode(state)
        precondition(try! JSONValueDecoder().decode(FuzzState.self, from: encoded) == state, "state round trip")
    }
}

/// Every body is decoded as an action; successes must round-trip through the wire shape.
func checkActions(_ bytes: UnsafeBufferPointer<UInt8>) {
    do {
        let action = try decodeAction(FuzzAction.self, from: bytes)
        let encoded = try! encodeAction(action)
        precondition(try! decodeAction(FuzzAction.self, from: encoded) == action, "action round trip")
    } catch {
        precondition(!error.message.isEmpty)
    }
}

/// Pointer text from the input never crashes, and parsed pointers print back to equal pointers.
func checkPointer(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes.prefix(64), as: UTF8.self)
    guard let pointer = try? JSONPointer(text) else { return }
    precondition((try? JSONPointer(pointer.description)) == pointer, "pointer text round trip")
    let document: JSONValue = ["a": [1, ["b": "c"]], "": ["~": true]]
    _ = document[pointer]
}
