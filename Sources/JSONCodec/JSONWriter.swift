/// Appends compact JSON (no spaces, members in order, only the escapes RFC 8259 requires) to a byte buffer:
/// the answers on the hot path member by member, without an encoder or intermediate values, and whole
/// ``JSONValue``s (``JSONValue/serialized()``, the encoder's output).
///
/// ```swift
/// var out = JSONWriter(capacity: 24)
/// out.raw("{\"seq\":")
/// out.integer(7)
/// out.raw("}")
/// out.bytes    // {"seq":7}
/// ```
public struct JSONWriter: Sendable {
    /// What was written so far.
    @usableFromInline var buffer: [UInt8] = []

    /// The JSON written so far.
    @inlinable public var bytes: [UInt8] { buffer }

    /// A writer with room for `capacity` bytes, and one more for the newline that ends an answer.
    @inlinable
    public init(capacity: Int = 64) { buffer.reserveCapacity(capacity + 1) }

    /// Appends text that is already JSON (punctuation, a pre-encoded value).
    @inlinable @inline(__always)
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    /// Appends bytes that are already JSON.
    @inlinable
    public mutating func raw(_ json: some Sequence<UInt8>) { buffer.append(contentsOf: json) }

    /// Appends an integer in decimal.
    @inlinable
    public mutating func integer(_ value: some BinaryInteger) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        decimal(UInt64(value.magnitude))
    }

    /// Appends `true` or `false`.
    @inlinable
    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `"key":` for an object member.
    public mutating func key(_ key: String) {
        string(key)
        buffer.append(UInt8(ascii: ":"))
    }

    /// Appends a JSON value; non-finite doubles become `null`, as in JavaScript.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let bool): self.bool(bool)
        case .number(let number): self.number(number)
        case .string(let string): self.string(string)
        case .array(let array):
            buffer.append(UInt8(ascii: "["))
            for (position, element) in array.enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let object):
            buffer.append(UInt8(ascii: "{"))
            for position in object.memberKeys.indices {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                key(object.memberKeys[position])
                self.value(object.memberValues[position])
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a number; non-finite doubles have no JSON spelling and become `null`.
    public mutating func number(_ number: JSONNumber) {
        switch number {
        case .int(let value): integer(value)
        case .uint(let value): decimal(value)
        case .double(let value):
            guard value.isFinite else { return raw("null") }
            // Swift's description is the shortest text that round-trips, and is already valid JSON
            // ("1.0", "-0.0", "1e-05", "1.5e+300").
            var text = value.description
            text.withUTF8 { buffer.append(contentsOf: $0) }
        }
    }

    /// Appends the digits of `value`.
    @inlinable
    mutating func decimal(_ value: UInt64) {
        if value < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        if value < 100_000_000 {
            // Up to eight digits gathered in one register, most significant in the low byte: a stack
            // buffer appended as a slice cost ~170 instructions for a four-digit seq.
            var rest = value
            var packed: UInt64 = 0
            var count = 0
            repeat {
                packed = packed << 8 | (UInt64(UInt8(ascii: "0")) + rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            for _ in 0..<count {
                buffer.append(UInt8(truncatingIfNeeded: packed))
                packed >>= 8
            }
            return
        }
        // 20 digits hold UInt64.max; fill from the end of a stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var remaining = value
            var start = 20
            while remaining > 0 {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Appends a quoted, escaped JSON string: runs without anything to escape are copied whole.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            buffer.append(UInt8(ascii: "\""))
            var runStart = 0
            for position in utf8.indices {
                let byte = utf8[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
                runStart = position + 1
                buffer.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
                case 0x0A: buffer.append(UInt8(ascii: "n"))
                case 0x0D: buffer.append(UInt8(ascii: "r"))
                case 0x09: buffer.append(UInt8(ascii: "t"))
                case 0x08: buffer.append(UInt8(ascii: "b"))
                case 0x0C: buffer.append(UInt8(ascii: "f"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    buffer.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)],
                    ])
                }
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            buffer.append(UInt8(ascii: "\""))
        }
    }

    /// A string as a quoted JSON string literal, for messages and generated documents.
    public static func quoted(_ value: String) -> String {
        var writer = JSONWriter(capacity: value.utf8.count + 2)
        writer.string(value)
        return String(decoding: writer.buffer, as: UTF8.self)
    }
}

extension JSONValue {
    /// The value as compact UTF-8 JSON (one line, no spaces; non-finite doubles become `null`).
    public func serialized() -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        writer.value(self)
        return writer.buffer
    }

    /// The value as compact JSON text (one line, no spaces).
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }
}
