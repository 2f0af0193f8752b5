import Testing

@testable import Tokens

/// A generator that always returns the same word: predictable tokens to pin the encoding.
struct ConstantGenerator: RandomNumberGenerator {
    var word: UInt64
    mutating func next() -> UInt64 { word }
}

@Suite struct SessionTokenTests {
    @Test func shapeOfAGeneratedToken() throws {
        let token = SessionToken.generate()
        #expect(token.text.utf8.count == SessionToken.textLength)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        #expect(token.text.utf8.allSatisfy(alphabet.contains), "base64url only, so never a comma")
        #expect(try Base64URL.decode(Array(token.text.utf8)).count == 32)
    }

    /// Every bit of the token comes from the generator: all-zero and all-one words give the extreme texts.
    @Test func bitsComeFromTheGenerator() {
        var zeros = ConstantGenerator(word: 0)
        #expect(SessionToken.generate(using: &zeros).text == String(repeating: "A", count: 43))
        var ones = ConstantGenerator(word: .max)
        #expect(SessionToken.generate(using: &ones).text == String(repeating: "_", count: 42) + "8")
    }

    @Test func generatedTokensDiffer() {
        let texts = Set((0..<1000).map { _ in SessionToken.generate().text })
        #expect(texts.count == 1000)
    }

    @Test func neverPrinted() {
        let token = SessionToken.generate()
        #expect("\(token)" == "SessionToken(redacted)")
        #expect(String(reflecting: token) == "SessionToken(redacted)")
        var dumped = ""
        dump(token, to: &dumped)
        #expect(!dumped.contains(token.text), "dump showed the token")
        var dumpedHash = ""
        dump([token], to: &dumpedHash)
        #expect(!dumpedHash.contains(token.text))
    }

    /// The stored form is SHA-256 over the domain label, a NUL and the token; the expected value comes from
    /// `printf 'reactor-server session token v1\0AAA…A' | sha256sum` (43 A's).
    @Test func storedFormIsTheDomainSeparatedHash() {
        var zeros = ConstantGenerator(word: 0)
        let token = SessionToken.generate(using: &zeros)
        #expect(token.hash.storedText == "3f3071823dcf6e9fc0427acd98edeaaad124f97e1a198d9175bef1f0a8f1ab67")
        // Not the plain SHA-256 of the token (`printf AAA…A | sha256sum`).
        #expect(token.hash.storedText != "0f007385b6f9d4b7eeb2748605afe1a984a0a3bfa3f014d09e2a784ce9e5cd1a")
        #expect(!token.hash.storedText.contains(token.text))
    }

    @Test func presentedTokensAreCheckedAgainstTheHash() {
        let token = SessionToken.generate()
        let stored = token.hash
        #expect(stored.matches(token.text))
        #expect(stored.matches(Substring(token.text)))
        #expect(!stored.matches(SessionToken.generate().text))
        #expect(!stored.matches(String(token.text.dropLast())))
        #expect(!stored.matches(token.text + "A"))
        #expect(!stored.matches(""))
        #expect(!stored.matches(String(repeating: "A", count: 10_000)))
        #expect(!stored.matches(token.hash.storedText), "the stored form is not a token")
    }

    @Test func storedTextRoundTrips() throws {
        let stored = SessionToken.generate().hash
        let text = stored.storedText
        #expect(text.utf8.count == 64)
        let read = try #require(SessionTokenHash(storedText: text))
        #expect(read == stored)
    }

    @Test(arguments: [
        "", "3f30", String(repeating: "a", count: 63), String(repeating: "a", count: 65),
        "3F3071823DCF6E9FC0427ACD98EDEAAAD124F97E1A198D9175BEF1F0A8F1AB67",
        "3f3071823dcf6e9fc0427acd98edeaaad124f97e1a198d9175bef1f0a8f1ab6g",
        " 3f3071823dcf6e9fc0427acd98edeaaad124f97e1a198d9175bef1f0a8f1ab6",
    ])
    func damagedStoredTextIsRefused(text: String) {
        #expect(SessionTokenHash(storedText: text) == nil)
    }

    /// An unknown session (nothing stored) and a missing token are refused like a wrong token.
    @Test func verifyWithoutAStoredHash() {
        let token = SessionToken.generate()
        #expect(SessionTokenHash.verify(presented: token.text, against: token.hash))
        #expect(!SessionTokenHash.verify(presented: token.text, against: nil))
        #expect(!SessionTokenHash.verify(presented: nil, against: token.hash))
        #expect(!SessionTokenHash.verify(presented: nil, against: nil))
        // The decoy's own preimage opens nothing.
        #expect(!SessionTokenHash.verify(presented: "no session", against: nil))
    }
}
