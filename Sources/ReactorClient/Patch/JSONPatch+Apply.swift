import JSONCodec

// Applying a patch (RFC 6902 §4, §5): all operations or none.
extension JSONPatch {
    /// `document` with every operation applied in order; throws at the first one that does not apply (its target
    /// missing, a `test` that fails, an index out of range), and the caller's document is left as it was.
    public func apply(to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var result = document
        for (index, operation) in operations.enumerated() {
            do {
                try Self.apply(operation, to: &result)
            } catch {
                throw JSONPatchError(operation: index, error.message)
            }
        }
        return result
    }

    /// Why one operation failed (its index is added by ``apply(to:)``).
    private struct Failure: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    private static func apply(_ operation: Operation, to document: inout JSONValue) throws(Failure) {
        switch operation {
        case .add(let path, let value):
            try add(value, at: path, in: &document)
        case .remove(let path):
            _ = try remove(at: path, in: &document)
        case .replace(let path, let value):
            try replace(at: path, with: value, in: &document)
        case .move(let from, let path):
            // §4.4: a location cannot be moved into one of its own children.
            let (source, target) = (from.tokens, path.tokens)
            if target.count > source.count, Array(target.prefix(source.count)) == source {
                throw Failure("cannot move \(quoted(from)) into its own child \(quoted(path))")
            }
            let value = try remove(at: from, in: &document)
            try add(value, at: path, in: &document)
        case .copy(let from, let path):
            try add(try value(at: from, in: document), at: path, in: &document)
        case .test(let path, let expected):
            let actual = try value(at: path, in: document)
            guard actual == expected else {
                throw Failure("test failed: \(quoted(path)) is \(excerpt(actual)), not \(excerpt(expected))")
            }
        }
    }

    /// The value at `pointer` (§4.5's and §4.6's `from`, and `test`'s `path`).
    private static func value(at pointer: JSONPointer, in document: JSONValue) throws(Failure) -> JSONValue {
        var current = document
        for (depth, token) in pointer.tokens.enumerated() {
            switch current {
            case .object(let object):
                guard let member = object[token] else { throw missing(pointer, depth) }
                current = member
            case .array(let array):
                guard let index = arrayIndex(token), index < array.count else { throw missing(pointer, depth) }
                current = array[index]
            default:
                throw missing(pointer, depth)
            }
        }
        return current
    }

    /// §4.1: adds `value` at `pointer`: a new or replaced member of an object, an element inserted in an array
    /// (`-` appends), or the whole document. The parent must exist.
    private static func add(_ value: JSONValue, at pointer: JSONPointer, in document: inout JSONValue) throws(Failure) {
        guard let last = pointer.tokens.last else {
            document = value
            return
        }
        try withParent(of: pointer, in: &document) { parent throws(Failure) in
            switch parent {
            case .object(var object):
                parent = .null
                object[last] = value
                parent = .object(object)
            case .array(var array):
                let index: Int
                if last == "-" {
                    index = array.count
                } else {
                    guard let given = arrayIndex(last), given <= array.count else {
                        throw Failure("\(quoted(pointer)) is past the end of an array of \(array.count) elements")
                    }
                    index = given
                }
                parent = .null
                array.insert(value, at: index)
                parent = .array(array)
            default:
                throw Failure("\(quoted(pointer)) goes into \(kind(of: parent)), which has no members")
            }
        }
    }

    /// §4.2: removes the value at `pointer` (which must exist) and returns it.
    private static func remove(at pointer: JSONPointer, in document: inout JSONValue) throws(Failure) -> JSONValue {
        guard let last = pointer.tokens.last else {
            // The document itself: nothing could hold the result.
            throw Failure("the whole document (path \"\") cannot be removed")
        }
        var removed = JSONValue.null
        try withParent(of: pointer, in: &document) { parent throws(Failure) in
            switch parent {
            case .object(var object):
                guard let member = object[last] else { throw missing(pointer, pointer.tokens.count - 1) }
                parent = .null
                object[last] = nil
                parent = .object(object)
                removed = member
            case .array(var array):
                guard let index = arrayIndex(last), index < array.count else {
                    throw missing(pointer, pointer.tokens.count - 1)
                }
                parent = .null
                removed = array.remove(at: index)
                parent = .array(array)
            default:
                throw missing(pointer, pointer.tokens.count - 1)
            }
        }
        return removed
    }

    /// §4.3: replaces the value at `pointer`, which must exist, where it is (a member keeps its place).
    private static func replace(
        at pointer: JSONPointer, with value: JSONValue, in document: inout JSONValue
    ) throws(Failure) {
        guard let last = pointer.tokens.last else {
            document = value
            return
        }
        try withParent(of: pointer, in: &document) { parent throws(Failure) in
            switch parent {
            case .object(var object):
                guard object.contains(key: last) else { throw missing(pointer, pointer.tokens.count - 1) }
                parent = .null
                object[last] = value
                parent = .object(object)
            case .array(var array):
                guard let index = arrayIndex(last), index < array.count else {
                    throw missing(pointer, pointer.tokens.count - 1)
                }
                parent = .null
                array[index] = value
                parent = .array(array)
            default:
                throw missing(pointer, pointer.tokens.count - 1)
            }
        }
    }

    /// Runs `body` on the container that holds `pointer`'s last token, changed in place: each container on the
    /// way is taken out of its parent while it changes, so none is copied when the document is the only owner.
    private static func withParent(
        of pointer: JSONPointer, in document: inout JSONValue, _ body: (inout JSONValue) throws(Failure) -> Void
    ) throws(Failure) {
        try descend(&document, pointer.tokens.dropLast(), pointer, depth: 0, body)
    }

    private static func descend(
        _ value: inout JSONValue, _ tokens: ArraySlice<String>, _ pointer: JSONPointer, depth: Int,
        _ body: (inout JSONValue) throws(Failure) -> Void
    ) throws(Failure) {
        guard let token = tokens.first else { return try body(&value) }
        switch value {
        case .object(var object):
            guard var child = object[token] else { throw missing(pointer, depth) }
            value = .null
            object[token] = .null
            defer {
                object[token] = child
                value = .object(object)
            }
            try descend(&child, tokens.dropFirst(), pointer, depth: depth + 1, body)
        case .array(var array):
            guard let index = arrayIndex(token), index < array.count else { throw missing(pointer, depth) }
            var child = array[index]
            value = .null
            array[index] = .null
            defer {
                array[index] = child
                value = .array(array)
            }
            try descend(&child, tokens.dropFirst(), pointer, depth: depth + 1, body)
        default:
            throw missing(pointer, depth)
        }
    }

    /// RFC 6901 §4: `0`, or digits without a leading zero; nil for anything else (`-` included).
    static func arrayIndex(_ token: String) -> Int? {
        let digits = token.utf8
        guard let first = digits.first, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            first != UInt8(ascii: "0") || digits.count == 1
        else { return nil }
        return Int(token)
    }

    /// The failure of a pointer whose token at `depth` names nothing.
    private static func missing(_ pointer: JSONPointer, _ depth: Int) -> Failure {
        let reached = JSONPointer(tokens: Array(pointer.tokens.prefix(depth + 1)))
        return reached == pointer
            ? Failure("\(quoted(pointer)) does not exist")
            : Failure("\(quoted(pointer)) does not exist: \(quoted(reached)) is missing")
    }

    private static func quoted(_ pointer: JSONPointer) -> String {
        JSONValue.string(pointer.description).serializedString()
    }

    /// The start of a value's JSON, for messages.
    private static func excerpt(_ value: JSONValue) -> String {
        let text = value.serializedString()
        return text.count > 60 ? text.prefix(60) + "…" : text
    }
}
