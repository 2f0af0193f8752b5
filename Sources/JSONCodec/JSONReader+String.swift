extension JSONReader {
    /// Reads a string starting at its opening quote; validates UTF-8 and decodes escapes.
    mutating func readString() throws(JSONParseError) -> String {
        let opening = position
        position += 1
        let start = position
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { return try readEscapedString(opening: opening, start: start) }
            if byte < 0x20 { throw controlCharacter(byte) }
            if byte < 0x80 {
                position += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        throw failure(
            .unexpectedEnd, at: position,
            "unexpected end of input at byte \(position): string starting at byte \(opening) is not closed")
    }

    func controlCharacter(_ byte: UInt8) -> JSONParseError {
        failure(
            .controlCharacter, at: position,
            "control character U+00\(JSONParseError.hex(byte)) at byte \(position) must be escaped in a string")
    }

    /// Continues a string from its first backslash, copying into a scratch buffer.
    mutating func readEscapedString(opening: Int, start: Int) throws(JSONParseError) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(position - start + 16)
        utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try readEscape(into: &utf8)
            case ..<0x20:
                throw controlCharacter(byte)
            case ..<0x80:
                utf8.append(byte)
                position += 1
            default:
                let sequenceStart = position
                try skipUTF8Sequence()
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[sequenceStart..<position]))
            }
        }
        throw failure(
            .unexpectedEnd, at: position,
            "unexpected end of input at byte \(position): string starting at byte \(opening) is not closed")
    }

    mutating func readEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        let backslash = position
        position += 1
        guard position < bytes.count else {
            throw failure(
                .unexpectedEnd, at: position, "unexpected end of input at byte \(position): unfinished escape")
        }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""): utf8.append(0x22)
        case UInt8(ascii: "\\"): utf8.append(0x5C)
        case UInt8(ascii: "/"): utf8.append(0x2F)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try readHex4())
            if (0xD800...0xDBFF).contains(scalar) {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else {
                    throw failure(
                        .invalidSurrogate, at: backslash,
                        "unpaired high surrogate \\u\(String(scalar, radix: 16, uppercase: true)) "
                            + "at byte \(backslash): expected a \\uDC00–\\uDFFF escape after it"
                    )
                }
                let lowEscape = position
                position += 2
                let low = UInt32(try readHex4())
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure(
                        .invalidSurrogate, at: lowEscape,
                        "expected a low surrogate \\uDC00–\\uDFFF at byte \(lowEscape) "
                            + "to pair with the one at byte \(backslash)"
                    )
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw failure(
                    .invalidSurrogate, at: backslash,
                    "unpaired low surrogate \\u\(String(scalar, radix: 16, uppercase: true)) at byte \(backslash)")
            }
            utf8.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(scalar)!)!)
        default:
            position -= 1
            throw failure(
                .invalidEscape, at: position,
                "invalid escape \\\(JSONParseError.describe(byte: byte)) at byte \(backslash): "
                    + "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u"
            )
        }
    }

    mutating func readHex4() throws(JSONParseError) -> UInt16 {
        var result: UInt16 = 0
        for _ in 0..<4 {
            guard position < bytes.count else {
                throw failure(
                    .unexpectedEnd, at: position,
                    "unexpected end of input at byte \(position): expected 4 hex digits after \\u")
            }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw failure(
                    .invalidEscape, at: position,
                    "unexpected \(JSONParseError.describe(byte: byte)) at byte \(position): "
                        + "expected 4 hex digits after \\u"
                )
            }
            result = result << 4 | UInt16(digit)
            position += 1
        }
        return result
    }

    /// Steps over one well-formed multi-byte UTF-8 sequence (RFC 3629 table), or names the bad byte.
    @inline(__always) mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = bytes[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: throw invalidUTF8(at: position)
        }
        for offset in 1..<length {
            let at = position + offset
            guard at < bytes.count else {
                throw failure(
                    .unexpectedEnd, at: at, "unexpected end of input at byte \(at): incomplete UTF-8 sequence")
            }
            let byte = bytes[at]
            if offset == 1 {
                guard byte >= low, byte <= high else { throw invalidUTF8(at: at) }
            } else {
                guard byte & 0xC0 == 0x80 else { throw invalidUTF8(at: at) }
            }
        }
        position += length
    }

    func invalidUTF8(at offset: Int) -> JSONParseError {
        failure(
            .invalidUTF8, at: offset,
            "invalid UTF-8 \(JSONParseError.describe(byte: bytes[offset])) at byte \(offset) in a string")
    }
}
