import Examples
import Foundation
import ReactorClient
import ReactorsTesting
import Testing

/// ``MultiplexedEvents`` against a live server's `GET /events?sessions=…`: several sessions over one connection,
/// parts that end alone, a server restart resumed from the one cursor, the tokens of `token` mode and a `jwt` mode JWT.
@Suite struct MultiplexedEventsLiveTests {
    @Test func severalSessionsShareOneConnectionAndEndOneByOne() async throws {
        let server = try LiveServer()
        let client = server.client()
        let left = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "left")
        let right = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "right")
        let recorder = SequenceRecorder(client.events(for: [left.access, SessionAccess(id: "ghost"), right.access]))
        try await recorder.wait("every part's start") { $0.count == 5 }
        _ = try await right.sendAndWait(.increase)
        _ = try await left.sendAndWait(.decrease)
        try await left.delete()
        try await recorder.wait("left's end") { $0.count == 8 }
        _ = try await right.sendAndWait(.increase)
        try await recorder.wait("right's next state") { $0.count == 9 }
        try await right.delete()
        let recording = try await recorder.waitUntilFinished("the end of every part")
        #expect(
            recording.elements.map(describe) == [
                "connecting", "connected", #"left: state 0 {"value":0}"#, "ghost: end unknown_session",
                #"right: state 0 {"value":0}"#,
                #"right: state 1 {"value":1}"#, #"left: state 1 {"value":-1}"#, "left: end session deleted",
                #"right: state 2 {"value":2}"#, "right: end session deleted",
                "ended: every session of the stream ended",
            ])
        guard case .state(_, let update) = recording.elements[6] else {
            Issue.record("not a state")
            return
        }
        #expect(
            try update.decoded(as: CounterReactor.State.self) == VersionedState(version: 1, state: .init(value: -1)))
    }

    /// The server stops and starts again over the same data while a session moves: the client sends the one
    /// cursor it last saw, and only what is newer arrives, for every session.
    @Test func aServerRestartResumesEveryPartFromTheOneCursor() async throws {
        let server = try LiveServer()
        let clock = TestClock()
        let client = server.client {
            $0.clock = clock
            $0.reconnect = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), jitter: 0)
        }
        let a = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "a")
        let b = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "b")
        let recorder = SequenceRecorder(client.events(for: [a.access, b.access]))
        func reported(_ text: String, times: Int = 1) async throws {
            try await recorder.wait("\(text) × \(times)") { $0.map(describe).filter { $0 == text }.count >= times }
        }
        try await reported(#"b: state 0 {"value":0}"#)
        _ = try await a.sendAndWait(.increase)
        try await reported(#"a: state 1 {"value":1}"#)

        try await server.stop()
        try await reported("reconnecting after 1000 ms (transport)")
        try server.start()
        _ = try await b.sendAndWait(.increase)
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await reported(#"b: state 1 {"value":1}"#)
        _ = try await a.sendAndWait(.increase)
        try await reported(#"a: state 2 {"value":2}"#)
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"a: state 0 {"value":0}"#, #"b: state 0 {"value":0}"#,
                #"a: state 1 {"value":1}"#,
                "reconnecting after 1000 ms (transport)", "connecting", "connected",
                #"b: state 1 {"value":1}"#, #"a: state 2 {"value":2}"#,
            ])
    }

    @Test func tokenModeSendsEachSessionsTokenAndAWrongOneEndsOnlyItsPart() async throws {
        let server = try LiveServer {
            $0.auth.sessions = "token"
            $0.storage.memoryOnly = true
        }
        let client = server.client()
        let mine = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "mine")
        let theirs = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "theirs")
        #expect(mine.token != nil && theirs.token != nil)
        let recorder = SequenceRecorder(
            client.events(for: [
                SessionAccess(id: "theirs", token: mine.token), mine.access,
                SessionAccess(id: "ghost", token: mine.token),
            ]))
        try await recorder.wait("every part's start") { $0.count == 5 }
        _ = try await mine.sendAndWait(.increase)
        try await recorder.wait("mine's next state") { $0.count == 6 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", "theirs: end unauthorized", #"mine: state 0 {"value":0}"#,
                "ghost: end unauthorized",
                #"mine: state 1 {"value":1}"#,
            ])
    }

    /// In `jwt` mode the client's JWT opens the stream, as `Authorization: Bearer` or as `access_token=`, and the
    /// server checks it for each part: a session outside the JWT's list ends alone, the others go on.
    @Test(arguments: [false, true])
    func jwtModeTheClientsJWTOpensTheSessionsItNamesAndEndsTheOthers(inQuery: Bool) async throws {
        let server = try LiveServer {
            $0.auth.sessions = "jwt"
            $0.auth.jwt.secret = AccessLiveTests.secret
            $0.storage.memoryOnly = true
        }
        let maker = server.client(bearerToken: try AccessLiveTests.jwt(sessions: ["*"], rights: [.create, .act]))
        let game = try await maker.createSession(reactor: "counter", as: CounterReactor.self, id: "game-1")
        _ = try await maker.createSession(reactor: "counter", as: CounterReactor.self, id: "other")
        let player = server.client(bearerToken: try AccessLiveTests.jwt(sessions: ["game-*"], rights: [.read])) {
            if inQuery { $0.streamCredentials = .accessTokenParameter }
        }
        let recorder = SequenceRecorder(player.events(for: [SessionAccess(id: "other"), SessionAccess(id: "game-1")]))
        try await recorder.wait("every part's start") { $0.count == 4 }
        _ = try await game.sendAndWait(.increase)
        try await recorder.wait("game-1's next state") { $0.count == 5 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", "other: end unauthorized", #"game-1: state 0 {"value":0}"#,
                #"game-1: state 1 {"value":1}"#,
            ])
    }
}
