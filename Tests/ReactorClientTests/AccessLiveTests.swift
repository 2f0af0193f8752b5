import Examples
import Foundation
import ReactorClient
import ReactorServerTesting
import ReactorsTesting
import Testing
import Tokens

/// The client's credential paths against the real server and its access middleware (`AccessTests` checks what
/// the requests carry on a scripted one): a session's own token, a JWT's rights and times, stream credentials.
@Suite struct AccessLiveTests {
    static let secret = "a-client-test-secret-of-at-least-32-bytes"

    /// A JWT for the live server's clock (a fresh injected clock: the server's starts at the same instant).
    static func jwt(sessions: [String], rights: [SessionRight], from start: Int64 = 0, expiresIn: Int64 = 3600) throws
        -> String
    {
        let now = InjectedClock().wallNanoseconds() / 1_000_000_000
        let signer = JWTSigner(secret: try JWTSecret(bytes: Array(secret.utf8)))
        return signer.sign(
            sessions: sessions, rights: rights, expiresAt: now + expiresIn, notBefore: start == 0 ? nil : now + start)
    }

    /// The HTTP status of a refusal, or nil when the call succeeded.
    static func refusal(_ call: () async throws(ReactorClientError) -> Void) async -> (Int, ServerErrorCode)? {
        do {
            try await call()
            return nil
        } catch {
            guard case .server(let status, let code, _) = error else { return (0, .internalError) }
            return (status, code)
        }
    }

    @Test func tokenModeTheSessionsOwnTokenOpensItAndAReplacementClosesItToTheOldOne() async throws {
        let server = try LiveServer { $0.auth.sessions = "token" }
        let client = server.client()
        let session = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "mine")
        let token = try #require(session.token)
        #expect(try await session.sendAndWait(.increase).state == .init(value: 1))
        #expect(try await session.get().version == 1)

        // Without the token, or with another one: 401, whether or not the session exists.
        let stranger = client.session("mine", as: CounterReactor.self)
        #expect(await Self.refusal { () async throws(ReactorClientError) in _ = try await stranger.get() }?.0 == 401)
        let wrong = client.session("mine", as: CounterReactor.self, token: "not-the-token")
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in _ = try await wrong.send(.increase) }?.0 == 401)
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await client.session("ghost", as: CounterReactor.self, token: token).get()
            }?.0 == 401)

        // The token as EventSource carries it (access_token=) opens the stream too.
        let streaming = server.client { $0.streamCredentials = .accessTokenParameter }
        let states = SequenceRecorder(streaming.session("mine", as: CounterReactor.self, token: token).events())
        try await states.wait("the current state over a stream opened with access_token") {
            $0.map(describe).contains(#"state 1 {"value":1}"#)
        }

        // A replacement through admin: the old token stops working, the new one works.
        let replaced = try await client.admin(token: LiveServer.adminToken).session("mine", as: CounterReactor.self)
            .replaceToken()
        #expect(replaced != token)
        #expect(await Self.refusal { () async throws(ReactorClientError) in _ = try await session.get() }?.0 == 401)
        #expect(try await client.session("mine", as: CounterReactor.self, token: replaced).get().version == 1)
        // The admin token is not a session's token.
        let admin = client.session("mine", as: CounterReactor.self, token: LiveServer.adminToken)
        #expect(await Self.refusal { () async throws(ReactorClientError) in _ = try await admin.get() }?.0 == 401)
    }

    @Test func jwtModeRightsNotBeforeAndExpiryAreTheServersToEnforce() async throws {
        let server = try LiveServer {
            $0.auth.sessions = "jwt"
            $0.auth.jwt.secret = Self.secret
        }
        let player = server.client(bearerToken: try Self.jwt(sessions: ["game-*"], rights: [.create, .read, .act]))
        let game = try await player.createSession(reactor: "counter", as: CounterReactor.self, id: "game-1")
        #expect(game.token == nil)
        #expect(try await game.sendAndWait(.increase).version == 1)
        // Outside its sessions: 403 forbidden; a server-chosen id needs the entry "*".
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await player.createSession(reactor: "counter", as: CounterReactor.self, id: "other")
            }?.0 == 403)
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await player.createSession(reactor: "counter", as: CounterReactor.self)
            }?.0 == 403)
        // Deleting needs the delete right: refused (403), then done by a token that has it.
        #expect(await Self.refusal { () async throws(ReactorClientError) in try await game.delete() }?.0 == 403)
        let reader = server.client(bearerToken: try Self.jwt(sessions: ["game-1"], rights: [.read]))
        #expect(try await reader.session("game-1", as: CounterReactor.self).get().version == 1)
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await reader.session("game-1", as: CounterReactor.self).send(.increase)
            }?.0 == 403)

        // Not valid yet (nbf ten minutes ahead, past the leeway), expired, or signed with another secret: 401.
        let early = server.client(bearerToken: try Self.jwt(sessions: ["game-1"], rights: [.read], from: 600))
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await early.session("game-1", as: CounterReactor.self).get()
            }?.0 == 401)
        let expired = server.client(bearerToken: try Self.jwt(sessions: ["game-1"], rights: [.read], expiresIn: -3600))
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await expired.session("game-1", as: CounterReactor.self).get()
            }?.0 == 401)
        let forged = server.client(bearerToken: try Self.jwt(sessions: ["*"], rights: [.read]) + "x")
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await forged.session("game-1", as: CounterReactor.self).get()
            }?.0 == 401)

        // The stream takes the JWT as access_token= too.
        let streaming = server.client(bearerToken: try Self.jwt(sessions: ["game-1"], rights: [.read])) {
            $0.streamCredentials = .accessTokenParameter
        }
        let states = SequenceRecorder(streaming.session("game-1", as: CounterReactor.self).events())
        try await states.wait("the current state over a stream opened with a JWT") {
            $0.map(describe).contains(#"state 1 {"value":1}"#)
        }

        let owner = server.client(bearerToken: try Self.jwt(sessions: ["game-1"], rights: [.delete, .read]))
        try await owner.session("game-1", as: CounterReactor.self).delete()
        #expect(
            await Self.refusal { () async throws(ReactorClientError) in
                _ = try await owner.session("game-1", as: CounterReactor.self).get()
            }?.0 == 404)
    }
}
