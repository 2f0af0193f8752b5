import Testing

@testable import Tokens

@Suite struct SHA256Tests {
    /// The FIPS 180-2 Appendix B examples (also NIST's "SHA256.pdf" examples), plus the empty message.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                + "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func standardExamples(message: String, digest: String) {
        #expect(hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test func oneMillionTimesA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))) == expected)
        // The same message fed in uneven pieces, so that pending bytes straddle block boundaries.
        var hasher = SHA256()
        var remaining = 1_000_000
        var piece = 1
        while remaining > 0 {
            let count = min(piece, remaining)
            hasher.update([UInt8](repeating: UInt8(ascii: "a"), count: count))
            remaining -= count
            piece = piece % 97 + 13
        }
        #expect(hex(hasher.finalize()) == expected)
    }

    @Test(arguments: 0...130)
    func everyLengthAgainstSha256sum(length: Int) {
        let message = (0..<length).map { UInt8($0) }
        #expect(hex(SHA256.hash(message)) == sha256OfCountingBytes[length])
    }

    /// Split into two updates at every offset, and fed byte by byte, the digest is the one-shot digest.
    @Test(arguments: [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 130])
    func streamingAtEveryOffset(length: Int) {
        let message = (0..<length).map { UInt8($0) }
        let expected = sha256OfCountingBytes[length]
        for split in 0...length {
            var hasher = SHA256()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hex(hasher.finalize()) == expected, "split at \(split)")
        }
        var byteByByte = SHA256()
        for byte in message { byteByByte.update(CollectionOfOne(byte)) }
        #expect(hex(byteByByte.finalize()) == expected)
    }

    /// A collection without contiguous storage takes the byte-at-a-time path.
    @Test func nonContiguousInput() {
        let message = (0..<130).lazy.map { UInt8($0) }
        var hasher = SHA256()
        hasher.update(message.prefix(7))
        hasher.update(message.dropFirst(7))
        #expect(hex(hasher.finalize()) == sha256OfCountingBytes[130])
    }

    /// A copy of a hasher is an independent value: both go on from the shared prefix on their own.
    @Test func copiesAreIndependent() {
        var first = SHA256()
        first.update(Array("ab".utf8))
        var second = first
        first.update(Array("c".utf8))
        second.update(Array("d".utf8))
        #expect(hex(first.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(second.finalize() == SHA256.hash(Array("abd".utf8)))
    }
}
