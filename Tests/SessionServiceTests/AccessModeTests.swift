import Foundation
import ReactorServerTesting
import SessionService
import Testing
import Tokens

/// API.md's "Access to sessions": `token` and `jwt` modes over real sockets, and what `open` keeps.
@Suite(.offThePool) struct AccessModeTests {
    static func error(_ response: TestResponse) throws -> (code: String?, message: String?) {
        let error = try response.json()["error"] as? [String: Any]
        return (error?["code"] as? String, error?["message"] as? String)
    }

    static func tokenServer(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            $0.auth.sessions = "token"
            configure(&$0)
        }
    }

    /// Creates a session in token mode; returns its id and token.
    static func create(_ server: TestServer, id: String? = nil) throws -> (id: String, token: String) {
        let body = id.map { #"{"reactor":"counter","id":"\#($0)"}"# } ?? #"{"reactor":"counter"}"#
        let created = try server.request("POST", "/sessions", body: body)
        #expect(created.status == 201)
        let json = try created.json()
        return (try #require(json["id"] as? String), try #require(json["token"] as? String))
    }

    @Test func tokenModeReturnsATokenAndRequiresItOnEveryRoute() throws {
        let server = try Self.tokenServer()
        let (id, token) = try Self.create(server)
        #expect(token.count == 43, "256 random bits")
        let bearer = [("Authorization", "Bearer \(token)")]
        for (method, path, body) in [
            ("GET", "/sessions/\(id)", nil), ("POST", "/sessions/\(id)/actions", #"{"type":"increase"}"#),
            ("GET", "/sessions/\(id)/events", nil),
        ] as [(String, String, String?)] {
            let refused = try server.request(method, path, body: body)
            #expect(refused.status == 401, "\(method) \(path) without a token")
            #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(try Self.error(refused).code == "unauthorized")
            #expect(
                try server.request(method, path, headers: [("Authorization", "Bearer wrong-\(token)")], body: body)
                    .status == 401)
        }
        #expect(
            try server.request(
                "POST", "/sessions/\(id)/actions?wait=true", headers: bearer, body: #"{"type":"increase"}"#
            ).status == 200)
        #expect(try server.request("GET", "/sessions/\(id)?access_token=\(token)").json()["version"] as? Int == 1)
        let stream = try server.subscribe("/sessions/\(id)/events?access_token=\(token)")
        #expect(try stream.nextEvent().id == "1")
        #expect(try server.request("DELETE", "/sessions/\(id)").status == 401)
        #expect(try server.request("DELETE", "/sessions/\(id)", headers: bearer).status == 204)
        #expect(try stream.nextEvent().event == "end")
    }

    @Test func anUnknownIdAndAWrongTokenGetTheSameAnswer() throws {
        let server = try Self.tokenServer()
        let (id, token) = try Self.create(server, id: "known")
        let wrong = try server.request(
            "GET", "/sessions/\(id)", headers: [("Authorization", "Bearer \(String(token.reversed()))")])
        let unknown = try server.request(
            "GET", "/sessions/ghost", headers: [("Authorization", "Bearer \(String(token.reversed()))")])
        #expect(wrong.status == 401 && unknown.status == 401)
        #expect(
            try Self.error(wrong).message?.replacingOccurrences(of: "known", with: "X")
                == Self.error(unknown).message?.replacingOccurrences(of: "ghost", with: "X"))
        #expect(wrong.header("WWW-Authenticate") == unknown.header("WWW-Authenticate"))
        // Even the session's own token does not open another id.
        #expect(
            try server.request("GET", "/sessions/ghost", headers: [("Authorization", "Bearer \(token)")]).status == 401)
    }

    @Test func adminReplacesATokenAndTheOldOneStopsWorking() throws {
        let server = try Self.tokenServer()
        let (id, old) = try Self.create(server)
        let replaced = try server.request("POST", "/admin/sessions/\(id)/token", headers: server.admin)
        #expect(replaced.status == 200)
        let new = try #require(try replaced.json()["token"] as? String)
        #expect(new != old)
        #expect(
            try server.request("GET", "/sessions/\(id)", headers: [("Authorization", "Bearer \(old)")]).status == 401)
        #expect(
            try server.request("GET", "/sessions/\(id)", headers: [("Authorization", "Bearer \(new)")]).status == 200)
        #expect(
            try server.request("POST", "/admin/sessions/\(id)/token").status == 401, "replacing needs the admin token")
        #expect(try server.request("POST", "/admin/sessions/ghost/token", headers: server.admin).status == 404)
        // Admin routes take the admin token, not session tokens.
        #expect(try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).status == 200)
        #expect(
            try server.request("GET", "/admin/sessions/\(id)/actions", headers: [("Authorization", "Bearer \(new)")])
                .status == 401)
    }

    @Test func tokensAreNeverLogged() throws {
        let server = try Self.tokenServer { $0.log.accessLog = true }
        let (id, token) = try Self.create(server)
        _ = try server.request("GET", "/sessions/\(id)?access_token=\(token)")
        _ = try server.request("POST", "/admin/sessions/\(id)/token", headers: server.admin)
        let lines = server.logs.values.map { "\($0.message) \($0.fields)" }
        #expect(lines.contains { $0.contains("replaced a session's token") })
        #expect(!lines.contains { $0.contains(token) })
    }

    @Test func openModeHasNoTokens() throws {
        let server = try TestServer()
        let created = try server.request("POST", "/sessions", body: #"{"reactor":"counter"}"#).json()
        #expect(created["token"] == nil)
        let id = try #require(created["id"] as? String)
        let replace = try server.request("POST", "/admin/sessions/\(id)/token", headers: server.admin)
        #expect(replace.status == 409)
        #expect(try Self.error(replace).code == "not_token_mode")
    }

    static let secret = "a-test-secret-of-at-least-32-bytes-0123456789"

    static func jwtServer(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            $0.auth.sessions = "jwt"
            $0.auth.jwt.secret = secret
            configure(&$0)
        }
    }

    /// A token from the test's backend, valid for an hour of the server's (manual) clock; with `notBefore`, not
    /// before that many seconds from now.
    static func jwt(
        _ server: TestServer, sessions: [String], rights: [SessionRight], secret: String = secret,
        expiresIn: Int64 = 3600, notBefore: Int64? = nil
    ) throws -> [(String, String)] {
        let now = server.clock.wallNanoseconds() / 1_000_000_000
        let signer = JWTSigner(secret: try JWTSecret(bytes: Array(secret.utf8)))
        let token = signer.sign(
            sessions: sessions, rights: rights, expiresAt: now + expiresIn, notBefore: notBefore.map { now + $0 })
        return [("Authorization", "Bearer \(token)")]
    }

    @Test func jwtModeChecksSignatureExpiryRightsAndSessions() throws {
        let server = try Self.jwtServer()
        let creator = try Self.jwt(server, sessions: ["game-*"], rights: [.create, .read, .act])
        #expect(
            try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":"game-1"}"#).status == 401,
            "no token")
        #expect(
            try server.request("POST", "/sessions", headers: creator, body: #"{"reactor":"counter","id":"game-1"}"#)
                .status == 201)
        let outside = try server.request(
            "POST", "/sessions", headers: creator, body: #"{"reactor":"counter","id":"other"}"#)
        #expect(outside.status == 403)
        #expect(try Self.error(outside).code == "forbidden")
        #expect(
            try server.request("POST", "/sessions", headers: creator, body: #"{"reactor":"counter"}"#).status == 403,
            "a server-chosen id needs *")
        #expect(
            try server.request(
                "POST", "/sessions", headers: try Self.jwt(server, sessions: ["*"], rights: [.create]),
                body: #"{"reactor":"counter"}"#
            ).status == 201)

        #expect(
            try server.request(
                "POST", "/sessions/game-1/actions?wait=true", headers: creator, body: #"{"type":"increase"}"#
            ).status == 200)
        let reader = try Self.jwt(server, sessions: ["game-1"], rights: [.read])
        #expect(try server.request("GET", "/sessions/game-1", headers: reader).json()["version"] as? Int == 1)
        #expect(
            try server.request("POST", "/sessions/game-1/actions", headers: reader, body: #"{"type":"increase"}"#)
                .status == 403, "read does not grant act")
        #expect(try server.request("DELETE", "/sessions/game-1", headers: creator).status == 403, "no delete right")
        #expect(
            try server.request(
                "GET", "/sessions/game-1", headers: try Self.jwt(server, sessions: ["game-2"], rights: [.read])
            ).status == 403)
        let bearer = try #require(reader.first?.1.split(separator: " ").last)
        let stream = try server.subscribe("/sessions/game-1/events?access_token=\(bearer)")
        #expect(try stream.nextEvent().id == "1")

        for (headers, what) in [
            (try Self.jwt(server, sessions: ["*"], rights: [.read], expiresIn: -120), "expired beyond the leeway"),
            (
                try Self.jwt(
                    server, sessions: ["*"], rights: [.read], secret: "another-secret-of-at-least-32-bytes-987654"),
                "signed with another secret"
            ),
            (
                [
                    (
                        "Authorization",
                        "Bearer eyJhbGciOiJub25lIn0."
                            + "eyJleHAiOjk5OTk5OTk5OTksInNlc3Npb25zIjpbIioiXSwicmlnaHRzIjpbInJlYWQiXX0."
                    )
                ], "alg none"
            ),
        ] {
            let refused = try server.request("GET", "/sessions/game-1", headers: headers)
            #expect(refused.status == 401, "\(what)")
            #expect(try Self.error(refused).code == "unauthorized")
        }
        #expect(
            try server.request(
                "GET", "/sessions/game-1",
                headers: try Self.jwt(server, sessions: ["*"], rights: [.read], expiresIn: -30)
            ).status == 200, "within the leeway")
    }

    /// `nbf` is enforced by the server's own clock: a JWT not valid yet is refused (401, saying for how long) until
    /// the server's time reaches its `nbf` less the leeway, and from then on it opens the session.
    @Test func jwtModeRefusesATokenUntilItsNotBeforeByTheServersClock() async throws {
        let server = try Self.jwtServer {
            $0.auth.jwt.leewaySeconds = 60
            $0.sessions.idleTTLSeconds = 0
        }
        let creator = try Self.jwt(server, sessions: ["later"], rights: [.create])
        let body = #"{"reactor":"counter","id":"later"}"#
        let created = try server.request("POST", "/sessions", headers: creator, body: body)
        #expect(created.status == 201)
        let early = try Self.jwt(server, sessions: ["later"], rights: [.read], notBefore: 600)
        let refused = try server.request("GET", "/sessions/later", headers: early)
        #expect(refused.status == 401)
        let (code, message) = try Self.error(refused)
        #expect(code == "unauthorized" && message?.contains("nbf") == true, "\(refused.text)")
        // 10 s short of nbf less the leeway: still refused; 10 s past it: served.
        await server.clock.advance(by: .seconds(530))
        #expect(try server.request("GET", "/sessions/later", headers: early).status == 401, "before nbf - leeway")
        await server.clock.advance(by: .seconds(20))
        let served = try server.request("GET", "/sessions/later", headers: early)
        #expect(served.status == 200, "after nbf - leeway: \(served.status) \(served.text)")
    }

    /// `DELETE /sessions/{id}` needs the delete right on that session: without it (or on another session) 403 and
    /// the session stays; with it 204, its stream (opened with a read-only JWT) ends, and it is gone.
    @Test func jwtModeDeletesASessionOnlyWithTheDeleteRight() throws {
        let server = try Self.jwtServer()
        let owner = try Self.jwt(server, sessions: ["game-*"], rights: [.create, .read, .act])
        let body = #"{"reactor":"counter","id":"game-1"}"#
        let created = try server.request("POST", "/sessions", headers: owner, body: body)
        #expect(created.status == 201)
        let reader = try Self.jwt(server, sessions: ["game-1"], rights: [.read])
        let bearer = try #require(reader.first?.1.split(separator: " ").last)
        let stream = try server.subscribe("/sessions/game-1/events?access_token=\(bearer)")
        #expect(try stream.nextEvent().id == "0")

        let withoutRight = try server.request("DELETE", "/sessions/game-1", headers: owner)
        #expect(withoutRight.status == 403, "\(withoutRight.text)")
        #expect(try Self.error(withoutRight).code == "forbidden")
        let elsewhere = try Self.jwt(server, sessions: ["game-2"], rights: [.delete])
        let onAnother = try server.request("DELETE", "/sessions/game-1", headers: elsewhere)
        #expect(onAnother.status == 403, "a delete right on game-2: \(onAnother.status)")
        #expect(try server.request("GET", "/sessions/game-1", headers: reader).status == 200, "refused deletes left it")

        let deleter = try Self.jwt(server, sessions: ["game-*"], rights: [.delete])
        let deleted = try server.request("DELETE", "/sessions/game-1", headers: deleter)
        #expect(deleted.status == 204, "\(deleted.status) \(deleted.text)")
        let end = try stream.nextEvent()
        #expect(end.event == "end", "\(end)")
        #expect(try server.request("GET", "/sessions/game-1", headers: reader).status == 404)
    }

    @Test func onlyTheListedReactorsMayBeCreated() throws {
        let server = try TestServer { $0.auth.reactors = ["counter"] }
        #expect(try server.request("POST", "/sessions", body: #"{"reactor":"counter"}"#).status == 201)
        let refused = try server.request("POST", "/sessions", body: #"{"reactor":"todo"}"#)
        #expect(refused.status == 403)
        #expect(try Self.error(refused).message?.contains("auth.reactors") == true)
    }

    @Test(arguments: [
        ("", "", "REACTOR_AUTH_JWT_SECRET"),
        ("too-short", "", "at least 32"),
        ("", "/nonexistent/secret", "cannot read /nonexistent/secret"),
    ])
    func jwtModeWithoutAGoodSecretDoesNotStart(secret: String, secretFile: String, message: String) {
        var auth = ServerConfiguration.Auth()
        auth.sessions = "jwt"
        auth.jwt.secret = secret
        auth.jwt.secretFile = secretFile
        do throws(ConfigurationError) {
            _ = try SessionAccessMode.from(auth)
            Issue.record("started without a usable secret")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
            #expect(secret.isEmpty || !error.message.contains(secret), "the secret is never echoed")
        }
    }

    @Test func theSecretFileIsRead() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-secret-\(UUID().uuidString)")
        try (Self.secret + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try Self.jwtServer {
            $0.auth.jwt.secret = ""
            $0.auth.jwt.secretFile = file.path
        }
        let headers = try Self.jwt(server, sessions: ["*"], rights: [.create])
        #expect(
            try server.request("POST", "/sessions", headers: headers, body: #"{"reactor":"counter"}"#).status == 201)
    }
}
