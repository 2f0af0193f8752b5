extension JSONReader {
    /// Reads a number per RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func readNumber() throws(JSONParseError) -> JSONNumber {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        // Digits accumulate into `mantissa` until it would overflow; then the slow path reparses the text.
        var mantissa: UInt64 = 0
        var overflow = false
        guard position < bytes.count, isDigit(bytes[position]) else {
            throw unexpected(.invalidNumber, expected: "a digit after '-'")
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) {
                throw failure(
                    .invalidNumber, at: position,
                    "unexpected \(JSONParseError.describe(byte: bytes[position])) at byte \(position): "
                        + "leading zeros are not allowed in numbers"
                )
            }
        } else {
            while position < bytes.count, isDigit(bytes[position]) {
                accumulate(bytes[position], into: &mantissa, overflow: &overflow)
                position += 1
            }
        }
        var isInteger = true
        var fractionDigits = 0
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw unexpected(.invalidNumber, expected: "a digit after '.'")
            }
            while position < bytes.count, isDigit(bytes[position]) {
                accumulate(bytes[position], into: &mantissa, overflow: &overflow)
                fractionDigits += 1
                position += 1
            }
        }
        var exponent = 0
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            var exponentNegative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw unexpected(.invalidNumber, expected: "a digit in the exponent")
            }
            while position < bytes.count, isDigit(bytes[position]) {
                // Saturate: anything this large is out of range (or zero) regardless of the rest.
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[position] - UInt8(ascii: "0")) }
                position += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        if isInteger, !overflow {
            if negative {
                if mantissa == 0 { return .double(-0.0) }
                if mantissa <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- mantissa)) }
            } else {
                if mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
                return .uint(mantissa)
            }
        }
        // Clinger's fast path: both the mantissa and the power of ten are exact doubles.
        let scale = exponent - fractionDigits
        if !overflow, mantissa <= 1 << 53, scale >= -22, scale <= 22 {
            var value = Double(mantissa)
            value = scale < 0 ? value / Self.powersOfTen[-scale] : value * Self.powersOfTen[scale]
            return .double(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw failure(
                .numberOutOfRange, at: start,
                "number \(text.prefix(40)) at byte \(start) is too large to represent")
        }
        return .double(value)
    }

    @inline(__always) func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    @inline(__always) func accumulate(_ byte: UInt8, into mantissa: inout UInt64, overflow: inout Bool) {
        let (times10, o1) = mantissa.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
        if o1 || o2 { overflow = true } else { mantissa = sum }
    }

    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
