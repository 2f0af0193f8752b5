import JSONCodec

/// An RFC 6902 JSON Patch: what a stream opened with `?delta=json-patch` sends instead of a whole state, read
/// from its JSON (``init(json:)``) and applied to the client's copy of the state (``apply(to:)``).
///
/// ```swift
/// let patch = try JSONPatch(json: Array(#"[{"op":"replace","path":"/items/1/done","value":true}]"#.utf8))
/// state = try patch.apply(to: state)   // throws, leaving `state` alone, when an operation does not apply
/// ```
public struct JSONPatch: Sendable, Hashable {
    /// One operation of a patch (RFC 6902 §4).
    public enum Operation: Sendable, Hashable {
        case add(path: JSONPointer, value: JSONValue)
        case remove(path: JSONPointer)
        case replace(path: JSONPointer, value: JSONValue)
        case move(from: JSONPointer, path: JSONPointer)
        case copy(from: JSONPointer, path: JSONPointer)
        case test(path: JSONPointer, value: JSONValue)
    }

    /// The operations, applied in order.
    public var operations: [Operation]

    /// A patch of these operations.
    public init(_ operations: [Operation]) {
        self.operations = operations
    }

    /// A patch from its JSON text: an array of operation objects (members other than `op`, `path`, `from` and
    /// `value` are ignored, RFC 6902 §4). Throws for text that is not JSON (a repeated member name included) or
    /// not such an array.
    public init(json: some Collection<UInt8>) throws(JSONPatchError) {
        let document: JSONValue
        do {
            document = try JSONParser(maxDepth: 512, maxBytes: .max).parse(json)
        } catch {
            throw JSONPatchError(operation: nil, "the patch is not JSON: \(error)")
        }
        try self.init(document: document)
    }

    /// A patch from its parsed JSON document.
    public init(document: JSONValue) throws(JSONPatchError) {
        guard case .array(let elements) = document else {
            let kind = Self.kind(of: document)
            throw JSONPatchError(operation: nil, "a patch is a JSON array of operations, not \(kind)")
        }
        var operations: [Operation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            operations.append(try Self.operation(element, index))
        }
        self.operations = operations
    }

    /// One operation object, checked as RFC 6902 §4 requires.
    private static func operation(_ element: JSONValue, _ index: Int) throws(JSONPatchError) -> Operation {
        guard case .object(let object) = element else {
            throw JSONPatchError(operation: index, "an operation is a JSON object, not \(kind(of: element))")
        }
        guard let op = object["op"] else { throw JSONPatchError(operation: index, "the operation has no \"op\"") }
        guard case .string(let name) = op else {
            throw JSONPatchError(operation: index, "\"op\" is \(kind(of: op)), not a string")
        }
        func pointer(_ member: String) throws(JSONPatchError) -> JSONPointer {
            guard let text = object[member] else {
                throw JSONPatchError(operation: index, "\(name) needs \"\(member)\"")
            }
            guard case .string(let string) = text else {
                throw JSONPatchError(operation: index, "\"\(member)\" is \(kind(of: text)), not a JSON pointer string")
            }
            do {
                return try JSONPointer(string)
            } catch {
                throw JSONPatchError(operation: index, "\"\(member)\" is not a JSON pointer: \(error.message)")
            }
        }
        func value() throws(JSONPatchError) -> JSONValue {
            // Present is what counts: `"value": null` is a value.
            guard let value = object["value"] else { throw JSONPatchError(operation: index, "\(name) needs \"value\"") }
            return value
        }
        switch name {
        case "add": return .add(path: try pointer("path"), value: try value())
        case "remove": return .remove(path: try pointer("path"))
        case "replace": return .replace(path: try pointer("path"), value: try value())
        case "move": return .move(from: try pointer("from"), path: try pointer("path"))
        case "copy": return .copy(from: try pointer("from"), path: try pointer("path"))
        case "test": return .test(path: try pointer("path"), value: try value())
        default:
            throw JSONPatchError(
                operation: index,
                "unknown op \(JSONValue.string(name).serializedString()) (RFC 6902 "
                    + "has add, remove, replace, move, copy and test)")
        }
    }

    /// What a value is, for messages.
    static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Why a patch could not be read or applied: which operation (0-based; nil for the patch as a whole) and why.
public struct JSONPatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The index of the operation that failed, nil when the patch itself is malformed.
    public var operation: Int?
    /// A sentence for people.
    public var message: String

    init(operation: Int?, _ message: String) {
        self.operation = operation
        self.message = message
    }

    /// The message, with the operation's index when there is one.
    public var description: String { operation.map { "operation \($0): \(message)" } ?? message }
}
