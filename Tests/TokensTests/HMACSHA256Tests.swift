import Testing

@testable import Tokens

/// One case of RFC 4231 §4: key, data and the HMAC-SHA-256 output (case 5 keeps only the first 128 bits).
struct RFC4231Case: Sendable, CustomTestStringConvertible {
    var number: Int
    var key: [UInt8]
    var data: [UInt8]
    var mac: String
    var testDescription: String { "test case \(number)" }
}

/// All seven test cases of RFC 4231 §4.2–4.8, transcribed from the RFC.
let rfc4231Cases: [RFC4231Case] = [
    RFC4231Case(
        number: 1, key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
        mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
    RFC4231Case(
        number: 2, key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
        mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    RFC4231Case(
        number: 3, key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
        mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
    RFC4231Case(
        number: 4, key: bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"),
        data: [UInt8](repeating: 0xcd, count: 50),
        mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
    RFC4231Case(
        number: 5, key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8),
        mac: "a3b6167473100ee06e0c796c2955552b"),
    RFC4231Case(
        number: 6, key: [UInt8](repeating: 0xaa, count: 131),
        data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
        mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    RFC4231Case(
        number: 7, key: [UInt8](repeating: 0xaa, count: 131),
        data: Array(
            ("This is a test using a larger than block-size key and a larger than block-size data. "
                + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
        mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
]

@Suite struct HMACSHA256Tests {
    @Test(arguments: rfc4231Cases)
    func rfc4231(testCase: RFC4231Case) {
        let mac = HMACSHA256.authenticationCode(for: testCase.data, key: testCase.key)
        #expect(mac.count == 32)
        // Case 5 gives only the leftmost 128 bits; comparing that prefix is what the RFC asks.
        #expect(hex(mac.prefix(testCase.mac.count / 2)) == testCase.mac)
    }

    /// A prepared MAC copied per message gives the same codes as a fresh one, and streaming matches one-shot.
    @Test(arguments: rfc4231Cases)
    func preparedAndStreamed(testCase: RFC4231Case) {
        let prepared = HMACSHA256(key: testCase.key)
        for split in [0, 1, testCase.data.count / 2, testCase.data.count] {
            var mac = prepared
            mac.update(testCase.data[..<split])
            mac.update(testCase.data[split...])
            #expect(hex(mac.finalize().prefix(testCase.mac.count / 2)) == testCase.mac, "split at \(split)")
        }
    }

    /// A key of exactly one block is used as it is; one byte more is hashed first (RFC 2104 §2).
    @Test func keyLengthBoundary() {
        let block = [UInt8](repeating: 0x42, count: 64)
        let longer = block + [0x42]
        let message = Array("boundary".utf8)
        #expect(
            HMACSHA256.authenticationCode(for: message, key: longer)
                == HMACSHA256.authenticationCode(for: message, key: SHA256.hash(longer)))
        #expect(
            HMACSHA256.authenticationCode(for: message, key: block)
                != HMACSHA256.authenticationCode(for: message, key: SHA256.hash(block)))
    }

    @Test func neverShowsItsState() {
        let mac = HMACSHA256(key: Array("a key that must stay out of logs".utf8))
        #expect("\(mac)" == "HMACSHA256(key redacted)")
        var dumped = ""
        dump(mac, to: &dumped)
        #expect(!dumped.contains("0x") && !dumped.contains("state"), "dump showed: \(dumped)")
    }
}
