/// Writes `JSONValue`s as compact UTF-8 JSON: no spaces, members in order, only the escapes RFC 8259 requires.
enum JSONWriter {
    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: appendLiteral("null", to: &bytes)
        case .bool(let bool): appendLiteral(bool ? "true" : "false", to: &bytes)
        case .number(let number): appendNumber(number, to: &bytes)
        case .string(let string): appendString(string, to: &bytes)
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in array.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for position in object.keys_.indices {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(object.keys_[position], to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                append(object.values_[position], to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    @inline(__always) static func appendLiteral(_ literal: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    static func appendNumber(_ number: JSONNumber, to bytes: inout [UInt8]) {
        switch number {
        case .int(let value):
            if value < 0 {
                bytes.append(UInt8(ascii: "-"))
                appendDecimal(value.magnitude, to: &bytes)
            } else {
                appendDecimal(UInt64(value), to: &bytes)
            }
        case .uint(let value): appendDecimal(value, to: &bytes)
        case .double(let value): appendDouble(value, to: &bytes)
        }
    }

    static func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // 20 digits hold UInt64.max; fill from the end of a stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var remaining = value
            var start = 20
            while remaining > 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<20]))
        }
    }

    /// Non-finite doubles have no JSON spelling; they are written as `null`, as JavaScript does.
    static func appendDouble(_ value: Double, to bytes: inout [UInt8]) {
        guard value.isFinite else {
            appendLiteral("null", to: &bytes)
            return
        }
        // Swift's description is the shortest text that round-trips, and is already valid JSON
        // ("1.0", "-0.0", "1e-05", "1.5e+300").
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var runStart = 0
            for position in utf8.indices {
                let byte = utf8[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
                runStart = position + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)],
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            bytes.append(UInt8(ascii: "\""))
        }
    }
}

extension JSONValue {
    /// The value as compact UTF-8 JSON (one line, no spaces; non-finite doubles become `null`).
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        JSONWriter.append(self, to: &bytes)
        return bytes
    }

    /// The value as compact JSON text (one line, no spaces).
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }
}
