import Testing

@testable import Tokens

/// One access decision: a token's sessions and rights, a request's right and id (nil: server-chosen).
struct AccessCase: Sendable, CustomTestStringConvertible {
    var sessions: [String]
    var rights: Set<SessionRight>
    var right: SessionRight
    var id: String?
    var allowed: Bool
    var testDescription: String {
        "\(sessions) \(rights.map(\.rawValue).sorted()) → \(right) on \(id ?? "<server-chosen>"): \(allowed)"
    }
}

let accessCases: [AccessCase] = [
    AccessCase(sessions: ["cart-42"], rights: [.read], right: .read, id: "cart-42", allowed: true),
    AccessCase(sessions: ["cart-42"], rights: [.read], right: .act, id: "cart-42", allowed: false),
    AccessCase(sessions: ["cart-42"], rights: [.read], right: .read, id: "cart-43", allowed: false),
    AccessCase(sessions: ["cart-42"], rights: [.read], right: .read, id: "cart-4", allowed: false),
    AccessCase(sessions: ["cart-42"], rights: [.read], right: .read, id: "cart-420", allowed: false),
    AccessCase(sessions: ["cart-42"], rights: [.read], right: .read, id: "CART-42", allowed: false),
    AccessCase(sessions: ["user-7-*"], rights: [.act], right: .act, id: "user-7-cart", allowed: true),
    AccessCase(sessions: ["user-7-*"], rights: [.act], right: .act, id: "user-7-", allowed: true),
    AccessCase(sessions: ["user-7-*"], rights: [.act], right: .act, id: "user-7", allowed: false),
    AccessCase(sessions: ["user-7-*"], rights: [.act], right: .act, id: "user-70", allowed: false),
    AccessCase(sessions: ["*"], rights: [.delete], right: .delete, id: "anything_at-all", allowed: true),
    AccessCase(sessions: ["*"], rights: [.delete], right: .read, id: "anything", allowed: false),
    AccessCase(sessions: [], rights: [.read], right: .read, id: "a", allowed: false),
    AccessCase(sessions: ["a"], rights: [], right: .read, id: "a", allowed: false),
    // POST /sessions: a named id needs a matching entry; a server-chosen one needs "*".
    AccessCase(sessions: ["game-*"], rights: [.create], right: .create, id: "game-1", allowed: true),
    AccessCase(sessions: ["game-*"], rights: [.create], right: .create, id: nil, allowed: false),
    AccessCase(sessions: ["a", "b"], rights: [.create], right: .create, id: nil, allowed: false),
    AccessCase(sessions: ["a", "*"], rights: [.create], right: .create, id: nil, allowed: true),
    AccessCase(sessions: ["*"], rights: [.read], right: .create, id: nil, allowed: false),
    AccessCase(sessions: ["a", "b*"], rights: [.read, .act], right: .act, id: "bee", allowed: true),
    // Matching is by UTF-8 bytes: a canonically equivalent spelling is another id.
    AccessCase(sessions: ["caf\u{e9}"], rights: [.read], right: .read, id: "cafe\u{301}", allowed: false),
]

@Suite struct JWTClaimsTests {
    @Test(arguments: accessCases)
    func allows(access: AccessCase) throws {
        // Built from claim text, as the verifier builds them (non-ASCII entries are built directly).
        let patterns = access.sessions.map { entry in
            (try? SessionPattern(claim: entry)) ?? .exact(entry)
        }
        let claims = JWTClaims(expiresAt: 1, sessions: patterns, rights: access.rights)
        #expect(claims.allows(right: access.right, sessionID: access.id) == access.allowed)
        #expect((claims.refusal(right: access.right, sessionID: access.id) == nil) == access.allowed)
    }

    @Test func refusalsSayWhatIsMissing() {
        let claims = JWTClaims(expiresAt: 1, sessions: [.prefix("game-")], rights: [.read, .create])
        #expect(
            claims.refusal(right: .delete, sessionID: "game-1")
                == "the token does not grant delete (it grants only create, read)")
        #expect(claims.refusal(right: .read, sessionID: "chat-1") == "the token's sessions do not cover this session")
        #expect(
            claims.refusal(right: .create, sessionID: nil)?.hasPrefix("a server-chosen id needs the entry \"*\"")
                == true)
        let none = JWTClaims(expiresAt: 1, sessions: [.any], rights: [])
        #expect(none.refusal(right: .read, sessionID: "a") == "the token does not grant read (it grants no rights)")
    }

    @Test(arguments: [
        ("*", SessionPattern.any), ("a", .exact("a")), ("a*", .prefix("a")), ("A-z_0*", .prefix("A-z_0")),
        (String(repeating: "x", count: 64), .exact(String(repeating: "x", count: 64))),
        (String(repeating: "x", count: 64) + "*", .prefix(String(repeating: "x", count: 64))),
    ])
    func patternsParse(claim: String, pattern: SessionPattern) throws {
        #expect(try SessionPattern(claim: claim) == pattern)
        #expect(pattern.description == claim)
    }

    @Test(arguments: ["", "**", "*a", "a*b", "a b", "a/b", "é", String(repeating: "x", count: 65), "a.b", "a,b"])
    func patternsRefused(claim: String) {
        #expect(throws: SessionPatternError.self) { try SessionPattern(claim: claim) }
    }
}
