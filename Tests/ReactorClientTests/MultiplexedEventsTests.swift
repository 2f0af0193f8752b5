import Examples
import Foundation
import ReactorClient
import ReactorsTesting
import Testing

/// `GET /events?sessions=…` as API.md describes it, against a scripted server
/// (the live one: MultiplexedEventsLiveTests): the request, interleaved events, per-session ends, the cursor on
/// reconnect, and the tokens of `token` mode.
@Suite struct MultiplexedEventsTests {
    typealias Event = ScriptedServer.Event

    static func state(_ session: String, _ version: Int, _ value: Int, cursor: String) -> Event {
        Event("state", id: cursor, #"{"session":"\#(session)","version":\#(version),"state":{"value":\#(value)}}"#)
    }

    static func end(_ session: String, _ reason: String, cursor: String) -> Event {
        Event("end", id: cursor, #"{"session":"\#(session)","reason":"\#(reason)"}"#)
    }

    @Test func eventsOfSeveralSessionsResumeWithOneCursor() async throws {
        let server = try ScriptedServer { number, _ in
            switch number {
            case 0:
                .events(
                    [
                        Self.state("a", 3, 3, cursor: "k1"), Self.state("b", 0, 0, cursor: "k2"),
                        Self.end("c", "unknown_session", cursor: "k3"),
                        Event("pulse", id: "k3", #"{"session":"a","name":"alert","value":"hi","count":2}"#),
                        Self.state("a", 4, 4, cursor: "k4"),
                    ], close: true)
            case 1:
                // The server ends c's part again after the reconnect; the client said it once already.
                .events(
                    [
                        Self.end("c", "unknown_session", cursor: "k5"), Self.state("b", 1, 1, cursor: "k6"),
                        Self.end("a", "session deleted", cursor: "k7"),
                    ], close: false)
            default:
                .events([], close: false)
            }
        }
        let clock = TestClock()
        var configuration = ReactorClient.Configuration(clock: clock)
        configuration.reconnect.jitter = 0
        let client = ReactorClient(baseURL: server.baseURL, configuration: configuration)
        let recorder = SequenceRecorder(
            client.events(for: [SessionAccess(id: "a"), SessionAccess(id: "b"), SessionAccess(id: "c")]))
        try await recorder.wait("the drop") { $0.count == 8 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await recorder.wait("the second connection's events") { $0.count == 12 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"a: state 3 {"value":3}"#, #"b: state 0 {"value":0}"#,
                "c: end unknown_session",
                "a: pulse alert=\"hi\" #2", #"a: state 4 {"value":4}"#, "reconnecting after 1000 ms (transport)",
                "connecting", "connected", #"b: state 1 {"value":1}"#, "a: end session deleted",
            ])
        let requests = server.log.value.requests
        #expect(requests.map(\.target) == Array(repeating: "/events?sessions=a,b,c&delta=json-patch", count: 2))
        #expect(requests.map { $0.headers["last-event-id"] } == [nil, "k4"])
        #expect(requests[0].headers["authorization"] == nil)
        guard case .state(_, let update) = recorder.elements[2] else {
            Issue.record("not a state")
            return
        }
        #expect(try update.decoded(as: CounterReactor.State.self) == VersionedState(version: 3, state: .init(value: 3)))
    }

    @Test func theStreamFinishesOnceEveryPartHasEnded() async throws {
        let server = try ScriptedServer { _, _ in
            .events(
                [
                    Self.state("a", 0, 0, cursor: "1"), Self.end("a", "session deleted", cursor: "2"),
                    Self.end("b", "unauthorized", cursor: "3"),
                ], close: false)
        }
        let client = ReactorClient(baseURL: server.baseURL)
        let recorder = SequenceRecorder(client.events(for: [SessionAccess(id: "a"), SessionAccess(id: "b")]))
        let recording = try await recorder.waitUntilFinished("the end of both parts")
        #expect(
            recording.elements.map(describe) == [
                "connecting", "connected", #"a: state 0 {"value":0}"#, "a: end session deleted", "b: end unauthorized",
                "ended: every session of the stream ended",
            ])
        try await server.log.wait("the client closing the finished stream") { $0.closedByClient == 1 }
    }

    @Test func tokensTravelInSessionOrderAndAJWTInTheHeader() async throws {
        let server = try ScriptedServer { _, _ in .events([], close: false) }
        let client = ReactorClient(baseURL: server.baseURL, bearerToken: "the.jwt")
        let withTokens = SequenceRecorder(
            client.events(
                for: [
                    SessionAccess(id: "a", token: "t+1/="), SessionAccess(id: "b"), SessionAccess(id: "c", token: "t3"),
                ], select: "/value"))
        try await withTokens.wait("connected") { $0.count == 2 }
        let jwtOnly = SequenceRecorder(client.events(for: [SessionAccess(id: "a"), SessionAccess(id: "b")]))
        try await jwtOnly.wait("connected") { $0.count == 2 }
        let requests = server.log.value.requests
        let target = "/events?sessions=a,b,c&select=%2Fvalue&delta=json-patch&access_token=t%2B1%2F%3D,,t3"
        #expect(requests[0].target == target)
        #expect(requests[0].query("access_token") == "t+1/=,,t3")
        #expect(requests[0].headers["authorization"] == nil)
        #expect(requests[1].target == "/events?sessions=a,b&delta=json-patch")
        #expect(requests[1].headers["authorization"] == "Bearer the.jwt")
    }

    @Test func anErrorEventReconnectsTheWholeStream() async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .events(
                    [
                        Self.state("a", 1, 1, cursor: "z9"),
                        Event("error", #"{"code":"subscriber_too_slow","message":"behind"}"#),
                    ], close: true)
                : .events([], close: false)
        }
        var configuration = ReactorClient.Configuration()
        configuration.reconnect = ReconnectPolicy(initialDelay: .zero, jitter: 0)
        let recorder = SequenceRecorder(
            ReactorClient(baseURL: server.baseURL, configuration: configuration).events(for: [SessionAccess(id: "a")]))
        try await recorder.wait("connected again") { $0.count == 6 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"a: state 1 {"value":1}"#,
                "reconnecting after 0 ms (stream subscriber_too_slow)", "connecting", "connected",
            ])
        #expect(server.log.value.requests.last?.headers["last-event-id"] == "z9")
    }
}
