/// The parser's cursor over a contiguous buffer: one method per grammar rule of RFC 8259.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var depth = 0
    // Members and elements of the open containers, innermost last: each container is copied out once,
    // at its exact size, instead of growing its own arrays by doubling.
    var keyStack: [String] = []
    var valueStack: [JSONValue] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        // Actions and small states fit without regrowing; bigger documents double from here.
        keyStack.reserveCapacity(8)
        valueStack.reserveCapacity(8)
    }

    mutating func readDocument() throws(JSONParseError) -> JSONValue {
        let value = try readValue()
        skipWhitespace()
        if position < bytes.count {
            throw unexpected(.trailingData, expected: "end of input after the document")
        }
        return value
    }

    // MARK: Errors

    func unexpected(_ reason: JSONParseError.Reason, expected: String) -> JSONParseError {
        guard position < bytes.count else {
            return JSONParseError(
                offset: position, reason: .unexpectedEnd,
                message: "unexpected end of input at byte \(position): expected \(expected)")
        }
        return JSONParseError(
            offset: position, reason: reason,
            message:
                "unexpected \(JSONParseError.describe(byte: bytes[position])) at byte \(position): expected \(expected)"
        )
    }

    func failure(_ reason: JSONParseError.Reason, at offset: Int, _ message: String) -> JSONParseError {
        JSONParseError(offset: offset, reason: reason, message: message)
    }

    // MARK: Structure

    @inline(__always) mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func readValue() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw unexpected(.unexpectedEnd, expected: "a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try readObject())
        case UInt8(ascii: "["): return .array(try readArray())
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"):
            try readLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try readLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try readLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try readNumber())
        default: throw unexpected(.unexpectedByte, expected: "a value")
        }
    }

    mutating func readLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = position
        for offset in 0..<literal.utf8CodeUnitCount {
            let expected = literal.utf8Start[offset]
            guard position < bytes.count, bytes[position] == expected else {
                throw unexpected(.unexpectedByte, expected: "'\(literal)' (started at byte \(start))")
            }
            position += 1
        }
    }

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth {
            throw failure(
                .depthLimitExceeded, at: position,
                "nesting deeper than \(maxDepth) levels at byte \(position)")
        }
    }

    mutating func readArray() throws(JSONParseError) -> [JSONValue] {
        try enterContainer()
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return []
        }
        let base = valueStack.count
        while true {
            let element = try readValue()
            valueStack.append(element)
            skipWhitespace()
            guard position < bytes.count else { throw unexpected(.unexpectedEnd, expected: "',' or ']'") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    throw unexpected(.unexpectedByte, expected: "a value (trailing commas are not allowed)")
                }
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                let elements = Array(valueStack[base...])
                valueStack.removeSubrange(base...)
                return elements
            default:
                throw unexpected(.unexpectedByte, expected: "',' or ']'")
            }
        }
    }

    mutating func readObject() throws(JSONParseError) -> JSONObject {
        try enterContainer()
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return JSONObject()
        }
        let base = keyStack.count
        // Past a dozen members, duplicate checks switch from a scan to a set.
        var seen: Set<String>? = nil
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                if position < bytes.count, bytes[position] == UInt8(ascii: "}"), keyStack.count > base {
                    throw unexpected(.unexpectedByte, expected: "a member name (trailing commas are not allowed)")
                }
                throw unexpected(.unexpectedByte, expected: "a member name in double quotes")
            }
            let keyOffset = position
            let key = try readString()
            if isDuplicate(key, base: base, seen: &seen) {
                throw failure(
                    .duplicateKey, at: keyOffset,
                    "duplicate member \"\(key)\" at byte \(keyOffset): each name may appear once")
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw unexpected(.unexpectedByte, expected: "':' after member name \"\(key)\"")
            }
            position += 1
            let value = try readValue()
            keyStack.append(key)
            valueStack.append(value)
            skipWhitespace()
            guard position < bytes.count else { throw unexpected(.unexpectedEnd, expected: "',' or '}'") }
            switch bytes[position] {
            case UInt8(ascii: ","):
                position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                let valueBase = valueStack.count - (keyStack.count - base)
                let object = JSONObject(uniqueKeys: Array(keyStack[base...]), values: Array(valueStack[valueBase...]))
                keyStack.removeSubrange(base...)
                valueStack.removeSubrange(valueBase...)
                return object
            default:
                throw unexpected(.unexpectedByte, expected: "',' or '}'")
            }
        }
    }

    func isDuplicate(_ key: String, base: Int, seen: inout Set<String>?) -> Bool {
        let count = keyStack.count - base
        if count < JSONObject.indexThreshold {
            for position in base..<keyStack.count where keyStack[position] == key { return true }
            return false
        }
        if seen == nil { seen = Set(keyStack[base...]) }
        return !seen!.insert(key).inserted
    }
}
