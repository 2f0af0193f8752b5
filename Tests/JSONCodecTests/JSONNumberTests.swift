import JSONCodec
import Testing

@Suite struct JSONNumberTests {
    /// Numbers keep integers exact; the documented edges: -0 → double, beyond UInt64 → double, 1e400 → error.
    @Test(arguments: [
        ("0", JSONNumber.int(0)),
        ("-0", .double(-0.0)),
        ("-0.0", .double(-0.0)),
        ("42", .int(42)),
        ("-42", .int(-42)),
        ("9223372036854775807", .int(.max)),
        ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .uint(9_223_372_036_854_775_808)),
        ("18446744073709551615", .uint(.max)),
        ("18446744073709551616", .double(18_446_744_073_709_551_616)),
        ("-9223372036854775809", .double(-9_223_372_036_854_775_808.0)),  // rounds to -2^63 as a double
        ("1.5", .double(1.5)),
        ("-2.5e3", .double(-2500)),
        ("1E2", .double(100)),
        ("1e+2", .double(100)),
        ("1e-2", .double(0.01)),
        ("0.1", .double(0.1)),
        ("123456789012345678901234567890", .double(1.2345678901234568e29)),
        ("1e-400", .double(0)),
        ("2.2250738585072014e-308", .double(2.2250738585072014e-308)),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("4.9e-324", .double(.leastNonzeroMagnitude)),
        ("0.30000000000000004", .double(0.30000000000000004)),
        ("9007199254740993", .int(9_007_199_254_740_993)),
        ("9007199254740993.0", .double(9_007_199_254_740_992)),
        ("1.00000000000000000000000000001", .double(1)),
        ("1e0000000000000000000000000000001", .double(10)),
    ])
    func parsesNumbersExactly(text: String, expected: JSONNumber) throws {
        let value = try JSONParser().parse(Array(text.utf8))
        guard case .number(let number) = value else {
            Issue.record("\(text) parsed as \(value)")
            return
        }
        // Compare the representation too, not only numeric equality.
        #expect(String(reflecting: number) == String(reflecting: expected))
        if case .double(let double) = number, case .double(let wanted) = expected {
            #expect(double.sign == wanted.sign)
        }
    }

    @Test func numericEqualityAcrossRepresentations() {
        #expect(JSONNumber.int(1) == .uint(1))
        #expect(JSONNumber.int(1) == .double(1.0))
        #expect(JSONNumber.uint(.max) != .double(18_446_744_073_709_551_615.0))
        #expect(JSONNumber.double(0.5) != .int(0))
        #expect(Set<JSONNumber>([.int(1), .uint(1), .double(1)]).count == 1)
        #expect(JSONNumber.double(-0.0) != .int(0))
    }

    @Test(arguments: [
        (JSONNumber.int(-42), "-42"),
        (.int(.min), "-9223372036854775808"),
        (.uint(.max), "18446744073709551615"),
        (.double(1.5), "1.5"),
        (.double(1), "1.0"),
        (.double(-0.0), "-0.0"),
        (.double(1e-5), "1e-05"),
        (.double(1e300), "1e+300"),
        (.double(.infinity), "null"),
        (.double(.nan), "null"),
    ])
    func writesNumbers(number: JSONNumber, text: String) {
        #expect(number.description == text)
    }

    @Test(arguments: [
        0.1, 1e-7, 123.456, -1e300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 2.0.squareRoot(),
        -0.0,
    ])
    func doublesRoundTripBitExactly(double: Double) throws {
        let text = JSONValue.number(.double(double)).serialized()
        guard case .number(let parsed) = try JSONParser().parse(text) else {
            Issue.record("not a number")
            return
        }
        #expect(parsed.doubleValue.bitPattern == double.bitPattern)
    }
}
