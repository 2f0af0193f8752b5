import JSONCodec

/// An RFC 6902 applier of the operations the server writes (`add`, `remove`, `replace`, and `test`), kept apart from
/// the client's (`ReactorClient.JSONPatch`) and from the server's diff on purpose: a patch the server made is checked
/// by applying it here, so a mistake shared by the diff and the client cannot hide.
///
/// ```swift
/// let next = try TestJSONPatch.apply(patch, to: previous)   // patch: the parsed `data:` of an `event: patch`
/// #expect(next == stateOfThisVersion)
/// ```
public enum TestJSONPatch {
    /// `document` with every operation of `patch` (a parsed JSON array) applied in order; throws a `TestFailure`
    /// naming the operation that does not apply.
    public static func apply(_ patch: JSONValue, to document: JSONValue) throws -> JSONValue {
        guard case .array(let operations) = patch else { throw TestFailure("a patch is an array, not \(patch)") }
        var result = document
        for (index, operation) in operations.enumerated() {
            guard case .string(let op)? = operation["op"], case .string(let path)? = operation["path"] else {
                throw TestFailure("operation \(index) has no op or path: \(operation)")
            }
            let tokens: [String]
            do {
                tokens = try JSONPointer(path).tokens
            } catch {
                throw TestFailure("operation \(index): \(error)")
            }
            switch op {
            case "add", "replace":
                guard let value = operation["value"] else { throw TestFailure("operation \(index) has no value") }
                result = try set(value, at: tokens[...], in: result, inserting: op == "add", "operation \(index)")
            case "remove":
                result = try set(nil, at: tokens[...], in: result, inserting: false, "operation \(index)")
            case "test":
                guard let value = operation["value"], result[JSONPointer(tokens: tokens)] == value else {
                    throw TestFailure("operation \(index): test of \(path) failed")
                }
            default:
                throw TestFailure("operation \(index): \(op) is not an operation the server writes")
            }
        }
        return result
    }

    /// `value` with the place at `tokens` set to `new` (nil: removed); an `add` inserts into arrays, a `replace`
    /// or `remove` needs the place to exist.
    private static func set(
        _ new: JSONValue?, at tokens: ArraySlice<String>, in value: JSONValue, inserting: Bool, _ what: String
    ) throws -> JSONValue {
        guard let token = tokens.first else {
            guard let new else { throw TestFailure("\(what) removes the whole document") }
            return new
        }
        let last = tokens.count == 1
        switch value {
        case .object(var object):
            if last {
                guard inserting || object[token] != nil else { throw TestFailure("\(what): no member \(token)") }
                object[token] = new
                return .object(object)
            }
            guard let child = object[token] else { throw TestFailure("\(what): no member \(token)") }
            object[token] = try set(new, at: tokens.dropFirst(), in: child, inserting: inserting, what)
            return .object(object)
        case .array(var array):
            let index = token == "-" && inserting && last ? array.count : Int(token)
            guard let index, String(index) == token || token == "-", index >= 0 else {
                throw TestFailure("\(what): \(token) is not an index")
            }
            if last, inserting, let new {
                guard index <= array.count else { throw TestFailure("\(what): index \(index) past \(array.count)") }
                array.insert(new, at: index)
                return .array(array)
            }
            guard index < array.count else { throw TestFailure("\(what): index \(index) past \(array.count)") }
            if last {
                if let new { array[index] = new } else { array.remove(at: index) }
            } else {
                array[index] = try set(new, at: tokens.dropFirst(), in: array[index], inserting: inserting, what)
            }
            return .array(array)
        default:
            throw TestFailure("\(what): \(token) goes into a value with no members")
        }
    }
}
