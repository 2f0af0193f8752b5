import Testing

@testable import Tokens

@Suite struct Base64URLTests {
    /// RFC 4648 §10's vectors, without the padding, plus bytes that use '-' and '_'.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(Array(encoded.utf8)) == Array(plain.utf8))
    }

    @Test func urlSafeAlphabet() throws {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.encode([0xfb, 0xef, 0xbe]) == "----")
        #expect(Base64URL.encode([0xff, 0xff, 0xff]) == "____")
        #expect(try Base64URL.decode(Array("-_8".utf8)) == [0xfb, 0xff])
    }

    @Test func everyLengthRoundTrips() throws {
        for length in 0...200 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ length) }
            let text = Base64URL.encodedBytes(bytes)
            #expect(text.count == (length * 4 + 2) / 3)
            #expect(try Base64URL.decode(text) == bytes, "length \(length)")
        }
    }

    /// Strictness as a bijection: among all texts of two and three characters, exactly one decodes per byte
    /// string, and each decoded text is what the encoder writes for those bytes.
    @Test func exactlyOneTextPerByteString() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var decodedTwo = 0
        for a in alphabet {
            for b in alphabet {
                guard let bytes = try? Base64URL.decode([a, b]) else { continue }
                decodedTwo += 1
                #expect(Base64URL.encodedBytes(bytes) == [a, b])
            }
        }
        #expect(decodedTwo == 256)
        var decodedThree = 0
        var mismatches = 0
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    guard let bytes = try? Base64URL.decode([a, b, c]) else { continue }
                    decodedThree += 1
                    if Base64URL.encodedBytes(bytes) != [a, b, c] { mismatches += 1 }
                }
            }
        }
        #expect(decodedThree == 65536)
        #expect(mismatches == 0)
    }

    @Test(arguments: [
        ("Zg==", Base64URLError.Reason.invalidCharacter, 2, "'=' at offset 2: padding is not used"),
        ("Zm9v=", .invalidCharacter, 4, "'=' at offset 4: padding is not used"),
        ("+/8", .invalidCharacter, 0, "'+' at offset 0: standard base64, not base64url (use '-' and '_')"),
        ("a/8", .invalidCharacter, 1, "'/' at offset 1: standard base64"),
        ("ab cd", .invalidCharacter, 2, "byte 0x20 at offset 2: whitespace is not allowed"),
        ("abcd\n", .invalidCharacter, 4, "byte 0x0A at offset 4: whitespace is not allowed"),
        ("\tabc", .invalidCharacter, 0, "whitespace is not allowed"),
        ("ab\r\ncd", .invalidCharacter, 2, "whitespace is not allowed"),
        ("ab.c", .invalidCharacter, 2, "'.' at offset 2: not in the base64url alphabet"),
        ("ab\u{0}c", .invalidCharacter, 2, "byte 0x00 at offset 2"),
        ("abé", .invalidCharacter, 2, "byte 0xC3 at offset 2"),
        ("Z", .impossibleLength, 0, "a length of 4n+1 characters cannot be base64url"),
        ("Zm9vY", .impossibleLength, 4, "4n+1"),
        ("Zh", .nonZeroTrailingBits, 1, "sets bits beyond the last byte"),
        ("Zm9", .nonZeroTrailingBits, 2, "the last character at offset 2 sets bits beyond the last byte"),
        ("Zm9vYh", .nonZeroTrailingBits, 5, "not canonical"),
    ])
    func refusals(text: String, reason: Base64URLError.Reason, offset: Int, message: String) {
        #expect {
            try Base64URL.decode(Array(text.utf8))
        } throws: { error in
            guard let error = error as? Base64URLError else { return false }
            return error.reason == reason && error.offset == offset && error.description.contains(message)
        }
    }

    /// A non-contiguous input decodes like the same bytes in an array.
    @Test func lazyInput() throws {
        #expect(try Base64URL.decode("Zm9vYmFy".utf8) == Array("foobar".utf8))
    }
}
