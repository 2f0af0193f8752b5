import Foundation
import ReactorServerTesting
import SessionService
import Testing
import Tokens

#if canImport(Glibc)
    import Glibc
#endif

/// A stream ends when the credential that opened it stops being valid (README "Access to sessions"):
/// a replaced token ends the streams opened with the old one at once, on every instance of a cluster; a
/// JWT's stream ends at its `exp` plus the leeway. A single-session stream ends with `event: error`
/// `unauthorized` and closes; a part of a multiplexed stream ends with `event: end` `unauthorized`.
@Suite(.offThePool) struct StreamRevocationTests {
    typealias Multiplexed = MultiplexedEventStreamTests

    /// An `increase` with `token` (a session token, or a JWT as the whole header value's token).
    static func act(_ server: TestServer, _ id: String, token: String) throws {
        let answer = try server.request(
            "POST", "/sessions/\(id)/actions?wait=true", headers: [("Authorization", "Bearer \(token)")],
            body: #"{"type":"increase"}"#)
        #expect(answer.status == 200, "\(answer.status) \(answer.text)")
    }

    /// The single-session stream's last event is `error` `unauthorized` naming why, then it closes.
    static func expectUnauthorizedEnd(_ stream: TestClient, saying why: String) throws {
        let event = try stream.nextEvent(within: .seconds(15))
        let data = try event.object()
        #expect(event.event == "error" && data["code"] as? String == "unauthorized", "the stream went on with \(event)")
        #expect((data["message"] as? String)?.contains(why) == true, "\(data)")
        #expect(try stream.readToEnd().isEmpty, "the stream closes after it")
    }

    /// Streams on one server: a replacement of a's token ends a's stream and a's part, nothing else.
    static func replacementEndsTheOldTokensStreams(_ server: TestServer) throws {
        let (a, tokenA) = try AccessModeTests.create(server, id: "a")
        let (b, tokenB) = try AccessModeTests.create(server, id: "b")
        let single = try server.subscribe("/sessions/\(a)/events?access_token=\(tokenA)")
        #expect(try single.nextEvent().id == "0")
        let many = try server.subscribe(
            "/events?sessions=\(a),\(b)", headers: [("Authorization", "Bearer \(tokenA),\(tokenB)")])
        #expect(try Multiplexed.next(2, on: many) == ["a: state 0", "b: state 0"])
        let other = try server.subscribe("/sessions/\(b)/events?access_token=\(tokenB)")
        #expect(try other.nextEvent().id == "0")

        let replaced = try server.request("POST", "/admin/sessions/\(a)/token", headers: server.admin)
        let second = try #require(try replaced.json()["token"] as? String)
        // At once, with no new state to carry it.
        try expectUnauthorizedEnd(single, saying: "token was replaced")
        #expect(try Multiplexed.next(1, on: many) == ["a: end unauthorized"])
        // b's part and b's own stream go on; a's new token opens a stream that follows a.
        try act(server, b, token: tokenB)
        #expect(try Multiplexed.next(1, on: many) == ["b: state 1"])
        #expect(try other.nextEvent().id == "1")
        let renewed = try server.subscribe("/sessions/\(a)/events?access_token=\(second)")
        #expect(try renewed.nextEvent().id == "0")
        try act(server, a, token: second)
        #expect(try renewed.nextEvent().id == "1")

        // Replaced again: the stream opened with the second token ends too, and one with the third stays.
        let replacedAgain = try server.request("POST", "/admin/sessions/\(a)/token", headers: server.admin)
        let third = try #require(try replacedAgain.json()["token"] as? String)
        try expectUnauthorizedEnd(renewed, saying: "token was replaced")
        let last = try server.subscribe("/events?sessions=\(a)&access_token=\(third)")
        #expect(try Multiplexed.next(1, on: last) == ["a: state 1"])
        try act(server, a, token: third)
        #expect(try Multiplexed.next(1, on: last) == ["a: state 2"])
        let metrics = try server.request("GET", "/metrics").text
        #expect(
            metrics.contains("\nreactor_streams_ended_unauthorized_total{reason=\"token_replaced\"} 3\n"),
            "a's stream and part, then the renewed stream")
        let logged = server.logs.values.filter { $0.message.contains("ended the streams opened with a replaced token") }
        #expect(logged.count == 2, "one notice per replacement that ended streams")
        let lines = server.logs.values.map { "\($0.message) \($0.fields)" }
        #expect(!lines.contains { $0.contains(tokenA) || $0.contains(second) || $0.contains(third) }, "never logged")
    }

    @Test func replacingATokenEndsItsStreamsInMemory() throws {
        try Self.replacementEndsTheOldTokensStreams(try AccessModeTests.tokenServer())
    }

    @Test(arguments: TestStorage.all)
    func replacingATokenEndsItsStreams(storage: TestStorage) async throws {
        try await storage.withPlace("revoke-token") { place in
            try Self.replacementEndsTheOldTokensStreams(try TestServer(storage: place) { $0.auth.sessions = "token" })
        }
    }

    @Test(arguments: TestStorage.all)
    func aJWTStreamEndsAtItsExpiryPlusTheLeeway(storage: TestStorage) async throws {
        try await storage.withPlace("revoke-jwt") { place in
            let server = try TestServer(storage: place) {
                $0.auth.sessions = "jwt"
                $0.auth.jwt.secret = AccessModeTests.secret
                $0.auth.jwt.leewaySeconds = 30
            }
            let writer = try AccessModeTests.jwt(server, sessions: ["*"], rights: [.create, .act, .read])
            for id in ["a", "b"] {
                let body = #"{"reactor":"counter","id":"\#(id)"}"#
                #expect(try server.request("POST", "/sessions", headers: writer, body: body).status == 201)
            }
            // A reader's token for 120 s: with the leeway, its streams end 150 s from now.
            let reader = try AccessModeTests.jwt(server, sessions: ["a", "b"], rights: [.read], expiresIn: 120)
            let single = try server.subscribe("/sessions/a/events", headers: reader)
            #expect(try single.nextEvent().id == "0")
            let many = try server.subscribe("/events?sessions=a,b", headers: reader)
            #expect(try Multiplexed.next(2, on: many) == ["a: state 0", "b: state 0"])
            try await server.clock.scheduled.next("the token's deadline to be armed") { $0 == .seconds(150) }

            // A second before: both streams still follow a.
            await server.clock.advance(by: .seconds(149))
            let writerToken = try #require(writer.first?.1.split(separator: " ").last.map(String.init))
            try Self.act(server, "a", token: writerToken)
            #expect(try single.nextEvent().id == "1")
            #expect(try Multiplexed.next(1, on: many) == ["a: state 1"])

            // At exp + leeway both end, every part of the multiplexed one, which then closes.
            await server.clock.advance(by: .seconds(1))
            try Self.expectUnauthorizedEnd(single, saying: "expired")
            #expect(try Multiplexed.next(2, on: many) == ["a: end unauthorized", "b: end unauthorized"])
            #expect(try many.readToEnd().isEmpty)
            let metrics = try server.request("GET", "/metrics").text
            #expect(metrics.contains("\nreactor_streams_ended_unauthorized_total{reason=\"jwt_expired\"} 2\n"))
            // A fresh token follows a again.
            let another = try AccessModeTests.jwt(server, sessions: ["a"], rights: [.read])
            let fresh = try server.subscribe("/sessions/a/events", headers: another)
            #expect(try fresh.nextEvent().id == "1")
        }
    }
}

/// The cluster case with real `reactor-server` processes on one `nats-server`: a token replaced through one
/// instance ends the streams of that session that another instance serves, whether it relays the session
/// from its owner or runs it itself.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct StreamRevocationClusterTests {
    @Test func aTokenReplacedOnOneInstanceEndsTheStreamsAnotherServes() async throws {
        try await NATSServerProcess.with { nats in
            let prefix = "r" + String(UUID().uuidString.prefix(8)).lowercased()
            let on = ["--set", "auth.sessions=token"]
            let a = try await NATSFailoverTests.instance("a", servers: nats.url, prefix: prefix, replicas: 1, extra: on)
            defer { a.process.signal(SIGKILL) }
            let b = try await NATSFailoverTests.instance("b", servers: nats.url, prefix: prefix, replicas: 1, extra: on)
            defer { b.process.signal(SIGKILL) }
            let created = try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"shared"}"#)
            #expect(created.status == 201)
            let first = try #require(try created.json()["token"] as? String)
            let increase = { (token: String) in
                let answer = try a.client().request(
                    "POST", "/sessions/shared/actions?wait=true", headers: [("Authorization", "Bearer \(token)")],
                    body: #"{"type":"increase"}"#)
                #expect(answer.status == 200, "\(answer.status) \(answer.text)")
            }
            try increase(first)

            // b relays the session a runs: both kinds of stream there, and one on a.
            let singleOnB = try b.client()
            try singleOnB.openEventStream("/sessions/shared/events?access_token=\(first)")
            #expect(try singleOnB.nextEvent().id == "1")
            let manyOnB = try b.client()
            try manyOnB.openEventStream("/events?sessions=shared&access_token=\(first)")
            #expect(try MultiplexedEventStreamTests.next(1, on: manyOnB) == ["shared: state 1"])
            let onA = try a.client()
            try onA.openEventStream("/sessions/shared/events?access_token=\(first)")
            #expect(try onA.nextEvent().id == "1")

            // Replaced through a: b's streams end too (b learns it from the sessions bucket).
            let admin = NATSFailoverTests.admin
            let replaced = try a.client().request("POST", "/admin/sessions/shared/token", headers: admin)
            let second = try #require(try replaced.json()["token"] as? String)
            try StreamRevocationTests.expectUnauthorizedEnd(onA, saying: "token was replaced")
            try StreamRevocationTests.expectUnauthorizedEnd(singleOnB, saying: "token was replaced")
            #expect(try MultiplexedEventStreamTests.next(1, on: manyOnB) == ["shared: end unauthorized"])

            // Replaced through b, which does not run the session: a's stream opened with the second token ends.
            let secondOnA = try a.client()
            try secondOnA.openEventStream("/sessions/shared/events?access_token=\(second)")
            #expect(try secondOnA.nextEvent().id == "1")
            let again = try b.client().request("POST", "/admin/sessions/shared/token", headers: admin)
            let third = try #require(try again.json()["token"] as? String)
            try StreamRevocationTests.expectUnauthorizedEnd(secondOnA, saying: "token was replaced")

            // The third token streams on both, and its streams see the next state.
            let thirdOnA = try a.client()
            try thirdOnA.openEventStream("/sessions/shared/events?access_token=\(third)")
            #expect(try thirdOnA.nextEvent().id == "1")
            let thirdOnB = try b.client()
            try thirdOnB.openEventStream("/sessions/shared/events?access_token=\(third)")
            #expect(try thirdOnB.nextEvent().id == "1")
            try increase(third)
            #expect(try thirdOnA.nextEvent().id == "2")
            #expect(try thirdOnB.nextEvent().id == "2")
        }
    }
}
