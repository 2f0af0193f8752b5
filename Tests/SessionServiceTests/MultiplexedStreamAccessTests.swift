import Foundation
import ReactorServerTesting
import SessionService
import Testing
import Tokens

/// `GET /events?sessions=…` in the `token` and `jwt` access modes (API.md "Many sessions over one stream",
/// "Access to sessions"): each part is checked as its own stream would be, a refused part ends alone, and
/// no answer tells an unknown id from a wrong token.
@Suite(.offThePool) struct MultiplexedStreamAccessTests {
    typealias Multiplexed = MultiplexedEventStreamTests

    @Test func tokenModeTakesOneTokenPerSessionInTheirOrder() throws {
        let server = try AccessModeTests.tokenServer { $0.log.accessLog = true }
        let (a, tokenA) = try AccessModeTests.create(server, id: "a")
        let (b, tokenB) = try AccessModeTests.create(server, id: "b")
        let (c, tokenC) = try AccessModeTests.create(server, id: "c")
        // b's own token in c's place, c's token in b's: only a's part is granted (EventSource's way: the query).
        let stream = try server.subscribe("/events?sessions=\(a),\(b),\(c)&access_token=\(tokenA),\(tokenC),\(tokenB)")
        #expect(try Multiplexed.next(3, on: stream) == ["a: state 0", "b: end unauthorized", "c: end unauthorized"])
        _ = try server.request(
            "POST", "/sessions/a/actions?wait=true", headers: [("Authorization", "Bearer \(tokenA)")],
            body: #"{"type":"increase"}"#)
        #expect(try Multiplexed.next(1, on: stream) == ["a: state 1"])

        // An empty entry is a missing token; the header carries the same list.
        let header = try server.subscribe(
            "/events?sessions=\(a),\(b),\(c)", headers: [("Authorization", "Bearer ,\(tokenB),\(tokenC)")])
        #expect(try Multiplexed.next(3, on: header) == ["a: end unauthorized", "b: state 0", "c: state 0"])

        // No token at all: every part ends, then the stream (the request itself is not refused).
        let none = try server.subscribe("/events?sessions=\(a),\(b)")
        #expect(try Multiplexed.next(2, on: none) == ["a: end unauthorized", "b: end unauthorized"])
        #expect(try none.readToEnd().isEmpty)
        let lines = server.logs.values.map { "\($0.message) \($0.fields)" }
        #expect(lines.contains { $0.contains("GET /events") }, "the access log saw the streams")
        #expect(
            !lines.contains { $0.contains(tokenA) || $0.contains(tokenB) || $0.contains(tokenC) },
            "tokens are never logged")
    }

    @Test func tokenModeTellsNoUnknownIdFromAWrongToken() throws {
        let server = try AccessModeTests.tokenServer()
        let (known, token) = try AccessModeTests.create(server, id: "known")
        let wrong = String(token.reversed())
        let stream = try server.subscribe("/events?sessions=\(known),ghost&access_token=\(wrong),\(wrong)")
        let refusedKnown = try stream.nextEvent()
        let refusedGhost = try stream.nextEvent()
        #expect(refusedKnown.event == "end" && refusedGhost.event == "end")
        #expect(refusedKnown.data == #"{"session":"known","reason":"unauthorized"}"#)
        #expect(
            refusedGhost.data == #"{"session":"ghost","reason":"unauthorized"}"#,
            "not unknown_session: ids cannot be probed")
        // Even the right token of another session opens nothing under an unknown id.
        let probe = try server.subscribe("/events?sessions=ghost&access_token=\(token)")
        #expect(try Multiplexed.next(1, on: probe) == ["ghost: end unauthorized"])
        // A deleted session, with its old token, ends the same way.
        #expect(
            try server.request("DELETE", "/sessions/known", headers: [("Authorization", "Bearer \(token)")]).status
                == 204)
        let deleted = try server.subscribe("/events?sessions=known&access_token=\(token)")
        #expect(try Multiplexed.next(1, on: deleted) == ["known: end unauthorized"])
    }

    @Test func jwtModeVerifiesTheTokenOnceAndTheReadRightPerSession() throws {
        let server = try AccessModeTests.jwtServer()
        let creator = try AccessModeTests.jwt(server, sessions: ["*"], rights: [.create])
        for id in ["game-1", "game-2", "other"] {
            #expect(
                try server.request("POST", "/sessions", headers: creator, body: #"{"reactor":"counter","id":"\#(id)"}"#)
                    .status == 201)
        }
        let reader = try AccessModeTests.jwt(server, sessions: ["game-*", "ghost"], rights: [.read])
        let jwt = try #require(reader.first?.1.split(separator: " ").last)
        // EventSource's way: the JWT as access_token=.
        let stream = try server.subscribe("/events?sessions=game-1,other,ghost,game-2&access_token=\(jwt)")
        #expect(
            try Multiplexed.next(4, on: stream) == [
                "game-1: state 0", "other: end unauthorized", "ghost: end unknown_session", "game-2: state 0",
            ])
        let header = try server.subscribe("/events?sessions=game-2", headers: reader)
        #expect(try Multiplexed.next(1, on: header) == ["game-2: state 0"])

        // Without the read right every part ends; a JWT that is no good refuses the whole request.
        let actor = try AccessModeTests.jwt(server, sessions: ["*"], rights: [.act])
        let noRead = try server.subscribe("/events?sessions=game-1", headers: actor)
        #expect(try Multiplexed.next(1, on: noRead) == ["game-1: end unauthorized"])
        for (headers, what) in [
            ([], "no token"),
            (try AccessModeTests.jwt(server, sessions: ["*"], rights: [.read], expiresIn: -120), "expired"),
            (
                try AccessModeTests.jwt(
                    server, sessions: ["*"], rights: [.read], secret: "another-secret-of-at-least-32-bytes-987654"),
                "signed with another secret"
            ),
        ] as [([(String, String)], String)] {
            let refused = try server.request("GET", "/events?sessions=game-1", headers: headers)
            #expect(refused.status == 401, "\(what)")
            #expect(refused.errorCode == "unauthorized", "\(what)")
            #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(what)")
        }
    }

    @Test func openModeNeedsNoToken() throws {
        let server = try TestServer()
        try server.createSession("counter", id: "a")
        let stream = try server.subscribe("/events?sessions=a&access_token=whatever")
        #expect(try Multiplexed.next(1, on: stream) == ["a: state 0"])
    }
}
