import JSONCodec
import Testing

@testable import Tokens

@Suite struct JWTSignerTests {
    let secret = try! JWTSecret(bytes: fixtureSecret)

    /// The signer writes the same bytes Python's json + hmac wrote for the "minimal" fixture.
    @Test func matchesThePythonMintedToken() {
        let token = JWTSigner(secret: secret).sign(sessions: ["cart-42"], rights: [.read], expiresAt: 1_800_003_600)
        #expect(token == acceptedFixtures.first { $0.name == "minimal" }!.token)
    }

    @Test func headerIsHS256JWT() throws {
        let token = JWTSigner(secret: secret).sign(sessions: ["a"], rights: [.read], expiresAt: 1)
        let header = try Base64URL.decode(Array(token.split(separator: ".")[0].utf8))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"HS256","typ":"JWT"}"#)
    }

    @Test(arguments: [
        (
            ["*"], [SessionRight.create, .read, .act, .delete], Int64(1_800_003_600), Int64?.none, Int64?.none,
            String?.none
        ),
        (["a", "b-*"], [.read], 1_800_000_001, 1_799_999_000, 1_799_999_000, "user-7"),
        ([], [], 1_800_000_030, nil, nil, nil),
    ])
    func roundTrip(sessions: [String], rights: [SessionRight], exp: Int64, nbf: Int64?, iat: Int64?, sub: String?)
        throws
    {
        let token = JWTSigner(secret: secret).sign(
            sessions: sessions, rights: rights, expiresAt: exp, notBefore: nbf, issuedAt: iat, subject: sub)
        let claims = try JWTVerifier(secret: secret).verify(token, now: fixtureNow)
        #expect(claims.sessions.map(\.description) == sessions)
        #expect(claims.rights == Set(rights))
        #expect(claims.expiresAt == Double(exp))
        #expect(claims.notBefore == nbf.map(Double.init))
        #expect(claims.issuedAt == iat.map(Double.init))
        #expect(claims.subject == sub)
    }

    /// A token is bound to its secret: another secret's verifier refuses it at the signature.
    @Test func anotherSecretRefuses() throws {
        let token = JWTSigner(secret: secret).sign(sessions: ["a"], rights: [.read], expiresAt: 1_800_003_600)
        let other = try JWTVerifier(secret: JWTSecret(bytes: Array("another secret, also 32 bytes or more long".utf8)))
        #expect {
            try other.verify(token, now: fixtureNow)
        } throws: { ($0 as? JWTError)?.reason == .signatureMismatch }
    }
}

@Suite struct JWTSecretTests {
    @Test(arguments: [0, 1, 16, 31])
    func shortSecretsAreRefused(length: Int) {
        let bytes = Array(String(repeating: "k", count: length).utf8)
        #expect {
            try JWTSecret(bytes: bytes)
        } throws: { error in
            guard let error = error as? JWTConfigurationError else { return false }
            return error.message.hasPrefix(
                "the JWT secret is \(length) bytes; HS256 needs at least 32 (256 bits, RFC 7518 §3.2)")
                && (length < 8 || !error.message.contains(String(decoding: bytes, as: UTF8.self)))
        }
    }

    @Test func thirtyTwoBytesAreEnough() throws {
        _ = try JWTSecret(bytes: [UInt8](repeating: 7, count: 32))
    }

    @Test func neverPrinted() throws {
        let secret = try JWTSecret(bytes: fixtureSecret)
        let text = String(decoding: fixtureSecret, as: UTF8.self)
        #expect("\(secret)" == "JWTSecret(redacted)")
        var dumped = ""
        dump(try JWTVerifier(secret: secret), to: &dumped)
        dump(JWTSigner(secret: secret), to: &dumped)
        #expect(!dumped.contains(text))
        #expect(!dumped.contains("0x"), "dump showed key-derived words: \(dumped)")
    }
}
