import Examples
import Foundation
import ReactorClient
import ReactorsTesting
import Testing

/// How the client reads `event: patch` (`?delta=json-patch`) against a scripted server: each patch applied to the
/// state before and delivered as a whole state; one that does not apply (a failing `test`, a path that is not
/// there, no state to apply it to) makes it reconnect from the last state it read, which the server answers with
/// a whole state; the same on the multiplexed stream with its cursor. The live server: `StatePatchesLiveTests`.
@Suite struct StatePatchesTests {
    typealias Event = ScriptedServer.Event

    static func client(_ server: ScriptedServer, _ clock: TestClock, patches: Bool = true) -> ReactorClient {
        var configuration = ReactorClient.Configuration(clock: clock)
        configuration.reconnect = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30), jitter: 0)
        configuration.statePatches = patches
        return ReactorClient(baseURL: server.baseURL, configuration: configuration)
    }

    static func patch(_ version: Int, _ operations: String) -> Event { Event("patch", id: String(version), operations) }

    /// A patch that sets the counter to `value`.
    static func replaceValue(_ value: Int) -> String { #"[{"op":"replace","path":"/value","value":\#(value)}]"# }

    @Test func patchesArriveAsWholeStates() async throws {
        let server = try ScriptedServer { _, _ in
            .events(
                [
                    Event("state", id: "5", #"{"value":5}"#),
                    Self.patch(6, #"[{"op":"replace","path":"/value","value":6}]"#),
                    Event("pulse", #"{"name":"alert","value":"hi","count":1}"#),
                    Self.patch(
                        8, #"[{"op":"test","path":"/value","value":6},{"op":"replace","path":"/value","value":8}]"#),
                ], close: false)
        }
        let recorder = SequenceRecorder(Self.client(server, TestClock()).session("s", as: CounterReactor.self).events())
        try await recorder.wait("three states and a pulse") { $0.count == 6 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"state 5 {"value":5}"#, #"state 6 {"value":6}"#, #"pulse alert="hi" #1"#,
                #"state 8 {"value":8}"#,
            ])
        #expect(server.log.value.requests.map(\.target) == ["/sessions/s/events?delta=json-patch"])
    }

    /// A patch that does not apply: a failing test, a place that is not there, text that is not a patch.
    @Test(arguments: [
        #"[{"op":"test","path":"/value","value":4},{"op":"replace","path":"/value","value":6}]"#,
        #"[{"op":"replace","path":"/nope/value","value":6}]"#,
        #"[{"op":"replace","path":"/value""#,
    ])
    func aPatchThatDoesNotApplyReconnectsFromTheLastStateRead(operations: String) async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .events(
                    [Event("state", id: "5", #"{"value":5}"#), Self.patch(6, operations), Self.patch(7, "[]")],
                    close: false)
                : .events(
                    [Event("state", id: "7", #"{"value":7}"#), Self.patch(8, Self.replaceValue(8))], close: false)
        }
        let clock = TestClock()
        let recorder = SequenceRecorder(Self.client(server, clock).session("s", as: CounterReactor.self).events())
        try await recorder.wait("the reconnection") { $0.count == 4 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await recorder.wait("the whole state and a patch") { $0.count == 8 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"state 5 {"value":5}"#, "reconnecting after 1000 ms (invalid response)",
                "connecting", "connected", #"state 7 {"value":7}"#, #"state 8 {"value":8}"#,
            ])
        let requests = server.log.value.requests
        #expect(requests.count == 2)
        #expect(requests.last?.headers["last-event-id"] == "5", "it resumes after the last state it has")
        guard case .connection(.reconnecting(_, let cause)) = recorder.elements[3] else {
            Issue.record("no reconnection")
            return
        }
        #expect("\(cause)".contains("patch to version 6"))
    }

    @Test func aPatchWithNoStateBeforeItReconnectsForAWholeState() async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .events([Self.patch(6, #"[{"op":"replace","path":"/value","value":6}]"#)], close: false)
                : .events([Event("state", id: "6", #"{"value":6}"#)], close: false)
        }
        let clock = TestClock()
        let session = Self.client(server, clock).session("s", as: CounterReactor.self)
        let recorder = SequenceRecorder(session.events(lastEventID: "4"))
        try await recorder.wait("the reconnection") { $0.count == 3 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await recorder.wait("the whole state") { $0.count == 6 }
        #expect(
            recorder.elements.map(describe).suffix(4) == [
                "reconnecting after 1000 ms (invalid response)", "connecting", "connected", #"state 6 {"value":6}"#,
            ])
        #expect(server.log.value.requests.map { $0.headers["last-event-id"] } == ["4", "4"])
    }

    /// A new connection starts from its own first state: a patch left over from before is not applied to it.
    @Test func patchesApplyOnlyToTheirConnectionsState() async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .events([Event("state", id: "5", #"{"value":5}"#)], close: true)
                : .events([Self.patch(6, #"[{"op":"replace","path":"/value","value":6}]"#)], close: false)
        }
        let clock = TestClock()
        let recorder = SequenceRecorder(Self.client(server, clock).session("s", as: CounterReactor.self).events())
        try await recorder.wait("the drop") { $0.count == 4 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await recorder.wait("the patch refused") { $0.count == 7 }
        #expect(
            recorder.elements.map(describe).suffix(3) == [
                "connecting", "connected", "reconnecting after 1000 ms (invalid response)",
            ])
    }

    @Test func theMultiplexedStreamResumesWithTheCursorFromBeforeTheBadPatch() async throws {
        let server = try ScriptedServer { number, _ in
            number == 0
                ? .events(
                    [
                        Event("state", id: "k1", #"{"session":"a","version":1,"state":{"value":1}}"#),
                        Event("state", id: "k2", #"{"session":"b","version":3,"state":{"value":3}}"#),
                        Event(
                            "patch", id: "k3",
                            #"{"session":"a","version":2,"patch":[{"op":"replace","path":"/value","value":2}]}"#),
                        Event(
                            "patch", id: "k4",
                            #"{"session":"b","version":4,"patch":[{"op":"remove","path":"/gone"}]}"#),
                    ], close: false)
                : .events(
                    [
                        Event("state", id: "k5", #"{"session":"b","version":4,"state":{"value":4}}"#),
                        Event(
                            "patch", id: "k6",
                            #"{"session":"b","version":5,"patch":[{"op":"replace","path":"/value","value":5}]}"#),
                    ], close: false)
        }
        let clock = TestClock()
        let sessions = [SessionAccess(id: "a"), SessionAccess(id: "b")]
        let recorder = SequenceRecorder(Self.client(server, clock).events(for: sessions))
        try await recorder.wait("the reconnection") { $0.count == 6 }
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await recorder.wait("b again") { $0.count == 10 }
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"a: state 1 {"value":1}"#, #"b: state 3 {"value":3}"#,
                #"a: state 2 {"value":2}"#,
                "reconnecting after 1000 ms (invalid response)", "connecting", "connected", #"b: state 4 {"value":4}"#,
                #"b: state 5 {"value":5}"#,
            ])
        let requests = server.log.value.requests
        #expect(requests.map(\.target) == Array(repeating: "/events?sessions=a,b&delta=json-patch", count: 2))
        #expect(requests.map { $0.headers["last-event-id"] } == [nil, "k3"])
    }

    @Test func wholeStatesCanBeAskedFor() async throws {
        let server = try ScriptedServer { _, _ in .events([Event("state", id: "1", #"{"value":1}"#)], close: false) }
        let client = Self.client(server, TestClock(), patches: false)
        let one = SequenceRecorder(client.session("s", as: CounterReactor.self).events())
        try await one.wait("the state") { $0.count == 3 }
        let many = SequenceRecorder(client.events(for: [SessionAccess(id: "s")]))
        try await many.wait("connected") { $0.count >= 2 }
        #expect(Set(server.log.value.requests.map(\.target)) == ["/sessions/s/events", "/events?sessions=s"])
    }
}
