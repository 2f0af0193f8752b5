import Examples
import Foundation
import ReactorClient
import ReactorsTesting
import Testing

/// The reconnecting loop against a scripted server: what each ending and each answer leads to, the waits
/// (`retry:`, backoff), `Last-Event-ID`, limits, and the connection closing when the reader goes away.
@Suite struct EventStreamDriverTests {
    typealias Event = ScriptedServer.Event

    static func client(
        _ server: ScriptedServer, clock: TestClock = TestClock(),
        _ configure: (inout ReactorClient.Configuration) -> Void = { _ in }
    ) -> ReactorClient {
        var configuration = ReactorClient.Configuration(clock: clock)
        configuration.reconnect = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30), jitter: 0)
        configure(&configuration)
        return ReactorClient(baseURL: server.baseURL, configuration: configuration)
    }

    static let state5 = Event("state", id: "5", #"{"value":5}"#)

    @Test(arguments: ["session_moved", "session_passivated", "subscriber_too_slow", "a_code_from_the_future"])
    func anErrorEventReconnectsFromTheLastVersion(code: String) async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .events([Self.state5, Event("error", #"{"code":"\#(code)","message":"go away"}"#)], close: true)
                : .events([Event("state", id: "6", #"{"value":6}"#)], close: false)
        }
        let clock = TestClock()
        let recorder = SequenceRecorder(
            Self.client(server, clock: clock).session("s", as: CounterReactor.self).events())
        try await recorder.wait("the wait") { $0.count == 4 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await recorder.wait("the state after reconnecting") { $0.count == 7 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"state 5 {"value":5}"#, "reconnecting after 1000 ms (stream \(code))",
                "connecting", "connected", #"state 6 {"value":6}"#,
            ])
        let requests = server.log.value.requests
        #expect(requests.map(\.target) == Array(repeating: "/sessions/s/events?delta=json-patch", count: 2))
        #expect(requests[0].headers["last-event-id"] == nil)
        #expect(requests[1].headers["last-event-id"] == "5")
        #expect(requests[1].headers["accept"] == "text/event-stream")
    }

    @Test func theServersRetryIsTheBaseOfTheBackoff() async throws {
        let server = try ScriptedServer { number, _ in
            switch number {
            case 0: .events([Event(nil, #"{"ignored":true}"#, retry: 250), Self.state5], close: true)
            case 1, 2: .status(503, json: #"{"error":{"code":"storage_unavailable","message":"disk full"}}"#)
            default: .events([], close: false)
            }
        }
        let clock = TestClock()
        let recorder = SequenceRecorder(
            Self.client(server, clock: clock).session("s", as: CounterReactor.self).events())
        for (count, delay) in [(4, 250), (6, 500), (8, 1000)] {
            try await recorder.wait("wait number \(count / 2 - 1)") { $0.count == count }
            await clock.waitForSleepers()
            await clock.advance(by: .milliseconds(delay))
        }
        try await recorder.wait("connected again") { $0.count == 10 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"state 5 {"value":5}"#, "reconnecting after 250 ms (transport)",
                "connecting", "reconnecting after 500 ms (503 storage_unavailable)",
                "connecting", "reconnecting after 1000 ms (503 storage_unavailable)",
                "connecting", "connected",
            ])
        #expect(server.log.value.requests.map { $0.headers["last-event-id"] } == [nil, "5", "5", "5"])
    }

    @Test func aRefusalsRetryAfterLengthensTheWait() async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .status(
                    503, json: #"{"error":{"code":"too_many_subscribers","message":"full"}}"#,
                    headers: [("Retry-After", "5")])
                : .events([], close: false)
        }
        let clock = TestClock()
        let recorder = SequenceRecorder(
            Self.client(server, clock: clock).session("s", as: CounterReactor.self).events())
        try await recorder.wait("the wait") { $0.count == 2 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(5))
        try await recorder.wait("connected") { $0.count == 4 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "reconnecting after 5000 ms (503 too_many_subscribers)", "connecting", "connected",
            ])
    }

    @Test(arguments: [
        (401, #"{"error":{"code":"unauthorized","message":"a token is required"}}"#, "failed: 401 unauthorized"),
        (403, #"{"error":{"code":"forbidden","message":"not yours"}}"#, "failed: 403 forbidden"),
        (409, #"{"error":{"code":"session_unavailable","message":"corrupt"}}"#, "failed: 409 session_unavailable"),
        (200, #"{"not":"a stream"}"#, "failed: invalid response"),
        (418, "<html>teapot</html>", "failed: invalid response"),
    ])
    func refusalsThatWaitingCannotCureEndTheStream(status: Int, body: String, expected: String) async throws {
        let server = try ScriptedServer { _, _ in .status(status, json: body) }
        let recorder = SequenceRecorder(Self.client(server).session("s", as: CounterReactor.self).events())
        let recording = try await recorder.waitUntilFinished("the refusal")
        #expect(recording.elements.map(describe) == ["connecting", expected])
        #expect(server.log.value.requests.count == 1)
    }

    @Test func eventsThatCannotBeReadEndTheStream() async throws {
        let server = try ScriptedServer { _, _ in
            .events(
                [
                    Event("message", "hello"), Event("future", "{}"), Self.state5,
                    Event("state", id: "6", #"{"value":"six"}"#),
                ], close: false)
        }
        let recorder = SequenceRecorder(Self.client(server).session("s", as: CounterReactor.self).events())
        let recording = try await recorder.waitUntilFinished("the failure")
        #expect(
            recording.elements.map(describe) == [
                "connecting", "connected", #"state 5 {"value":5}"#, "failed: invalid response",
            ])
        try await server.log.wait("the close") { $0.closedByClient == 1 }
    }

    @Test func anEventOverTheLimitEndsTheStream() async throws {
        let server = try ScriptedServer { _, _ in
            .events(
                [
                    Self.state5,
                    Event("state", id: "6", #"{"value":6,"padding":""# + String(repeating: "x", count: 200) + #""}"#),
                ], close: false)
        }
        let client = Self.client(server) { $0.eventLimits = .init(maxLineBytes: 100, maxEventBytes: 100) }
        let recorder = SequenceRecorder(client.session("s", as: CounterReactor.self).events())
        let recording = try await recorder.waitUntilFinished("the failure")
        #expect(
            recording.elements.map(describe) == [
                "connecting", "connected", #"state 5 {"value":5}"#, "failed: invalid response",
            ])
        guard case .connection(.ended(.failed(.invalidResponse(let message))))? = recording.elements.last else {
            return
        }
        #expect(message.contains("lineTooLong"))
    }

    @Test func cancellingTheReaderClosesTheConnection() async throws {
        let server = try ScriptedServer { _, _ in .events([Self.state5], close: false) }
        let recorder = SequenceRecorder(Self.client(server).session("s", as: CounterReactor.self).events())
        try await recorder.wait("the state") { $0.count == 3 }
        #expect(server.log.value.closedByClient == 0)
        recorder.cancel()
        try await server.log.wait("the server seeing the close") { $0.closedByClient == 1 }
        #expect(server.log.value.requests.count == 1)
    }

    @Test func aStreamThatFallsSilentIsReconnected() async throws {
        let server = try ScriptedServer { number, _ in .events(number == 0 ? [Self.state5] : [], close: false) }
        let client = Self.client(server) {
            $0.streamIdleTimeout = .seconds(1)
            $0.reconnect.initialDelay = .zero
            $0.clock = ContinuousClock()
        }
        let recorder = SequenceRecorder(client.session("s", as: CounterReactor.self).events())
        // The first connection delivers version 5, then nothing: its idle timeout ends it and a new one follows.
        let events = try await recorder.wait("a connection after version 5") { events in
            events.map(describe).drop { $0 != #"state 5 {"value":5}"# }.contains("connected")
        }
        let afterState = events.map(describe).drop { $0 != #"state 5 {"value":5}"# }
        #expect(
            afterState.prefix(4) == [
                #"state 5 {"value":5}"#, "reconnecting after 0 ms (transport)", "connecting", "connected",
            ])
        #expect(server.log.value.requests.last?.headers["last-event-id"] == "5")
    }
}
