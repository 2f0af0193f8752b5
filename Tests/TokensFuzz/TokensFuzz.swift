// libFuzzer harness for the JWT verifier and the base64url decoder, built by .ci/fuzz-tokens with
// swiftc -sanitize=fuzzer,address over Sources/Tokens (JSONCodec is linked as its own module). Each input is
// used four ways; besides crashes, the `expect` calls below are oracles: a broken one prints what broke
// and aborts, so the fuzzer stops with the input, which becomes a case in Tests/TokensTests.

import Glibc
import JSONCodec

/// The secret the harness signs with; seeds that should verify are signed with it too.
let fuzzSecret = try! JWTSecret(bytes: Array("fuzz secret: 32 bytes or more, not for production".utf8))
let fuzzVerifier = try! JWTVerifier(secret: fuzzSecret, maxTokenBytes: 2048)
let fuzzSigner = JWTSigner(secret: fuzzSecret)
let fuzzNow: Double = 1_800_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokens(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkBase64URL(input)
    checkToken(input)
    checkPayload(input)
    checkHeader(input)
    return 0
}

/// Strictness: whatever decodes re-encodes to the very same text; whatever is encoded decodes back.
func checkBase64URL(_ input: [UInt8]) {
    if let decoded = try? Base64URL.decode(input) {
        expect(Base64URL.encodedBytes(decoded) == input, "a non-canonical text decoded")
    }
    expect((try? Base64URL.decode(Base64URL.encodedBytes(input))) == input, "encoding did not round-trip")
}

/// The input as a whole token: refused or accepted, never a crash; a refusal never quotes the token.
func checkToken(_ input: [UInt8]) {
    do {
        let claims = try fuzzVerifier.verify(bytes: input, now: fuzzNow)
        checkClaims(claims)
    } catch {
        checkMessage(error.message, input: input)
    }
}

/// The input as a payload, correctly signed: only the payload or its claims can be wrong, never the
/// signature or the header, and an accepted payload is an object with the required claims.
func checkPayload(_ input: [UInt8]) {
    let token = fuzzSigner.sign(payloadJSON: input)
    do {
        let claims = try fuzzVerifier.verify(token, now: fuzzNow)
        checkClaims(claims)
        guard case .object(let payload)? = try? JSONParser().parse(input) else {
            fail("accepted a payload that is not a JSON object")
        }
        expect(
            payload["exp"] != nil && payload["sessions"] != nil && payload["rights"] != nil,
            "accepted without a required claim")
    } catch {
        switch error.reason {
        case .signatureMismatch, .algorithmNotAccepted, .headerNotAccepted:
            fail("a correctly signed token was refused for its \(error.reason)")
        case .tooLarge:
            expect(token.utf8.count > fuzzVerifier.maxTokenBytes, "refused as too large under the limit")
        default:
            checkMessage(error.message, input: input)
        }
    }
}

/// The input as a header over a valid payload, correctly signed: accepted only if it is a JSON object whose
/// alg is exactly "HS256" with no crit or b64, whatever else it holds.
func checkHeader(_ input: [UInt8]) {
    let payload = Base64URL.encodedBytes(Array(#"{"sessions":["a"],"rights":["read"],"exp":1800003600}"#.utf8))
    var signingInput = Base64URL.encodedBytes(input)
    signingInput.append(UInt8(ascii: "."))
    signingInput.append(contentsOf: payload)
    var token = signingInput
    token.append(UInt8(ascii: "."))
    token.append(
        contentsOf: Base64URL.encodedBytes(
            HMACSHA256.authenticationCode(
                for: signingInput, key: Array("fuzz secret: 32 bytes or more, not for production".utf8))))
    guard (try? fuzzVerifier.verify(bytes: token, now: fuzzNow)) != nil else { return }
    guard case .object(let header)? = try? JSONParser().parse(input) else {
        fail("accepted a header that is not a JSON object")
    }
    expect(
        header["alg"] == .string("HS256") && Array(header["alg"]!.stringValue!.utf8) == Array("HS256".utf8),
        "accepted alg \(String(describing: header["alg"]))")
    expect(!header.contains(key: "crit") && !header.contains(key: "b64"), "accepted a crit or b64 header")
}

/// Claims that passed verification obey the rules they were checked against.
func checkClaims(_ claims: JWTClaims) {
    expect(JWTClaims.numericDateRange.contains(claims.expiresAt), "exp out of range accepted")
    expect(fuzzNow < claims.expiresAt + Double(fuzzVerifier.leewaySeconds), "expired token accepted")
    if let nbf = claims.notBefore {
        expect(fuzzNow >= nbf - Double(fuzzVerifier.leewaySeconds), "early token accepted")
    }
    if let iat = claims.issuedAt { expect(iat <= fuzzNow + Double(fuzzVerifier.leewaySeconds), "future iat accepted") }
    for pattern in claims.sessions {
        expect((try? SessionPattern(claim: pattern.description)) == pattern, "a sessions entry does not round-trip")
    }
}

/// A message is one bounded line without the input (when the input is long enough to recognise) or the secret.
func checkMessage(_ message: String, input: [UInt8]) {
    expect(!message.isEmpty && message.utf8.count < 400, "message of \(message.utf8.count) bytes")
    expect(!message.utf8.contains(UInt8(ascii: "\n")), "message spans lines")
    expect(!message.contains("fuzz secret"), "message shows the secret")
    if input.count >= 12, let text = String(validating: input, as: UTF8.self) {
        expect(!message.contains(text), "message quotes the whole input")
    }
}

/// An oracle: prints `message` and aborts when `condition` is false. (`precondition` traps without its
/// message in an optimized build, which would leave only the input to guess from.)
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// Prints `message` and aborts: the fuzzer saves the input.
func fail(_ message: String) -> Never {
    fputs("TokensFuzz: \(message)\n", stderr)
    abort()
}
