import JSONCodec
import Testing

@testable import Tokens

@Suite struct JWTVerifierTests {
    let verifier = try! JWTVerifier(secret: JWTSecret(bytes: fixtureSecret))

    @Test(arguments: acceptedFixtures)
    func acceptsPythonMintedTokens(fixture: AcceptedFixture) throws {
        let claims = try verifier.verify(fixture.token, now: fixtureNow)
        #expect(claims.sessions.map(\.description) == fixture.sessions)
        #expect(claims.rights == Set(fixture.rights.map { SessionRight(rawValue: $0)! }))
        #expect(claims.expiresAt == fixture.exp)
        #expect(claims.notBefore == fixture.nbf)
        #expect(claims.issuedAt == fixture.iat)
        #expect(claims.subject == fixture.sub)
    }

    @Test(arguments: refusedFixtures)
    func refusesPythonMintedTokens(fixture: RefusedFixture) {
        let error = refusal(of: fixture.token)
        #expect(error?.reason == fixture.reason)
        #expect(error?.message.contains(fixture.message) == true, "message: \(error?.message ?? "none")")
        if let error { expectNoSecrets(in: error.message, token: fixture.token) }
    }

    /// RFC 7515 Appendix A.1, verbatim: its header and payload hold CRLF and spaces, so only an HMAC over
    /// the received bytes matches. The example carries no `sessions`, so the verifier gets past the signature
    /// and stops at the claims.
    @Test func rfc7515ExampleSignatureMatches() throws {
        let key = try Base64URL.decode(
            Array("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow".utf8))
        let token =
            "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let rfcVerifier = try JWTVerifier(secret: JWTSecret(bytes: key))
        #expect {
            try rfcVerifier.verify(token, now: 1_300_819_000)
        } throws: { error in
            (error as? JWTError)?.reason == .missingClaim
                && (error as? JWTError)?.message.contains("sessions is required") == true
        }
        // The same bytes under another key fail at the signature, which proves the first run got past it.
        #expect(refusal(of: token, verifier: verifier)?.reason == .signatureMismatch)
    }

    /// Every proper prefix of a valid token is refused, and none crashes.
    @Test func everyPrefixIsRefused() {
        let token = acceptedFixtures[0].token
        for end in 0..<token.utf8.count {
            let prefix = String(token.utf8.prefix(end))!
            #expect(refusal(of: prefix) != nil, "prefix of \(end) bytes was accepted")
        }
    }

    /// Replacing any one character with any other base64url character (or a dot) never yields an accepted
    /// token. A change in the last character's unused bits is refused as non-canonical, not ignored.
    @Test func everySingleCharacterChangeIsRefused() {
        let token = Array(acceptedFixtures[0].token.utf8)
        let replacements = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8)
        var accepted: [String] = []
        for position in token.indices {
            for replacement in replacements where replacement != token[position] {
                var changed = token
                changed[position] = replacement
                if (try? verifier.verify(bytes: changed, now: fixtureNow)) != nil {
                    accepted.append("\(position)→\(replacement)")
                }
            }
        }
        #expect(accepted.isEmpty)
    }

    @Test func sizeLimit() throws {
        let signer = JWTSigner(secret: try JWTSecret(bytes: fixtureSecret))
        // Pad an ignored claim until the token is exactly at the limit, then one byte over.
        func token(padding: Int) -> String {
            let payload: JSONObject = [
                "sessions": ["cart-42"], "rights": ["read"], "exp": 1_800_003_600,
                "pad": .string(String(repeating: "x", count: padding)),
            ]
            return signer.sign(payload: payload)
        }
        var padding = 6000
        while token(padding: padding).utf8.count < JWTVerifier.defaultMaxTokenBytes { padding += 1 }
        let atLimit = token(padding: padding)
        // base64url grows in steps of 4 per 3 bytes, so the exact limit may be skipped; then shrink the limit to fit.
        let limited = try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), maxTokenBytes: atLimit.utf8.count)
        #expect(try limited.verify(atLimit, now: fixtureNow).rights == [.read])
        let over = try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), maxTokenBytes: atLimit.utf8.count - 1)
        let error = refusal(of: atLimit, verifier: over)
        #expect(error?.reason == .tooLarge)
        #expect(error?.message == "the token is longer than \(atLimit.utf8.count - 1) bytes, the limit")
        // A megabyte of dots is refused by size before it is split.
        #expect(refusal(of: String(repeating: ".", count: 1 << 20))?.reason == .tooLarge)
    }

    @Test func leewayIsConfigurable() throws {
        let expiredInsideDefault = acceptedFixtures.first { $0.name.hasPrefix("expired 59 s ago") }!
        let strict = try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), leewaySeconds: 0)
        let error = refusal(of: expiredInsideDefault.token, verifier: strict)
        #expect(error?.reason == .expired)
        #expect(error?.message == "expired 59 s ago (exp 1799999941, leeway 0 s)")
        let lenient = try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), leewaySeconds: 300)
        #expect(throws: Never.self) { try lenient.verify(expiredInsideDefault.token, now: fixtureNow + 240) }
        #expect(refusal(of: expiredInsideDefault.token, verifier: lenient, now: fixtureNow + 241)?.reason == .expired)
    }

    @Test(arguments: [-1, 301, Int.max, Int.min])
    func leewayIsBounded(seconds: Int) throws {
        #expect {
            try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), leewaySeconds: seconds)
        } throws: { error in
            (error as? JWTConfigurationError)?.message
                == "the JWT leeway is \(seconds) s; it must lie between 0 and 300 s"
        }
    }

    /// The verifier reads time only from its argument: one token, walked across its window.
    @Test func timeComesFromTheCaller() throws {
        let signer = JWTSigner(secret: try JWTSecret(bytes: fixtureSecret))
        let token = signer.sign(sessions: ["a"], rights: [.read], expiresAt: 2_000, notBefore: 1_000, issuedAt: 1_000)
        let cases: [(Double, JWTError.Reason?)] = [
            (939.999, .notYetValid), (940, nil), (1_000, nil), (2_059.999, nil), (2_060, .expired), (1e12, .expired),
        ]
        for (now, expected) in cases {
            #expect(refusal(of: token, now: now)?.reason == expected, "at \(now)")
        }
        #expect(refusal(of: token, now: 939.5)?.message == "not valid for another 60.5 s (nbf 1000, leeway 60 s)")
    }

    /// A clock that returns NaN refuses every token instead of comparing false everywhere and accepting.
    @Test func notANumberClockRefuses() throws {
        let signer = JWTSigner(secret: try JWTSecret(bytes: fixtureSecret))
        let onlyExp = signer.sign(sessions: ["a"], rights: [.read], expiresAt: 2_000)
        #expect(refusal(of: onlyExp, now: .nan)?.reason == .expired)
        #expect(refusal(of: acceptedFixtures[0].token, now: .nan)?.reason == .expired)
    }

    @Test func audience() throws {
        let signer = JWTSigner(secret: try JWTSecret(bytes: fixtureSecret))
        let withAudience = try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), audience: "reactor-server")
        func token(aud: JSONValue?) -> String {
            var payload: JSONObject = ["sessions": ["a"], "rights": ["read"], "exp": 1_800_003_600]
            payload["aud"] = aud
            return signer.sign(payload: payload)
        }
        #expect(throws: Never.self) { try withAudience.verify(token(aud: "reactor-server"), now: fixtureNow) }
        #expect(throws: Never.self) { try withAudience.verify(token(aud: ["app", "reactor-server"]), now: fixtureNow) }
        let cases: [(JSONValue?, JWTError.Reason, String)] = [
            ("app", .audienceNotAccepted, "aud does not name \"reactor-server\""),
            (["app", "Reactor-Server"], .audienceNotAccepted, "aud does not name"),
            (nil, .audienceNotAccepted, "aud is required and must name \"reactor-server\""),
            (5, .invalidClaim, "aud must be a string or an array of strings, not a number"),
            (["reactor-server", 5], .invalidClaim, "aud[1] must be a string, not a number"),
        ]
        for (aud, reason, message) in cases {
            let error = refusal(of: token(aud: aud), verifier: withAudience)
            #expect(error?.reason == reason)
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "accepted")")
        }
        #expect(throws: JWTConfigurationError.self) {
            try JWTVerifier(secret: JWTSecret(bytes: fixtureSecret), audience: "")
        }
    }

    /// A hostile claim value is not copied into the message: long or non-printable values are described.
    @Test func hostileValuesStayOutOfMessages() throws {
        let signer = JWTSigner(secret: try JWTSecret(bytes: fixtureSecret))
        let long = String(repeating: "admin", count: 100)
        for right in [long, "re\nad", "\u{1b}[31mred"] {
            let token = signer.sign(payload: ["sessions": ["a"], "rights": [.string(right)], "exp": 1_800_003_600])
            let message = refusal(of: token)?.message ?? ""
            #expect(message.contains("rights[0] (a \(right.utf8.count)-byte string) is not a right"), "\(message)")
        }
    }

    func refusal(of token: String, verifier: JWTVerifier? = nil, now: Double = fixtureNow) -> JWTError? {
        do {
            _ = try (verifier ?? self.verifier).verify(token, now: now)
            return nil
        } catch {
            return error
        }
    }

    /// Neither the token, nor its signature part, nor the secret appears in a message.
    func expectNoSecrets(in message: String, token: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let secretText = String(decoding: fixtureSecret, as: UTF8.self)
        #expect(!message.contains(secretText), sourceLocation: sourceLocation)
        if token.count > 8 { #expect(!message.contains(token), sourceLocation: sourceLocation) }
        if let signature = token.split(separator: ".", omittingEmptySubsequences: false).last, signature.count >= 8 {
            #expect(!message.contains(signature), sourceLocation: sourceLocation)
        }
    }
}
