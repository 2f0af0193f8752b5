import Examples
import Foundation
import ReactorClient
import ReactorsTesting
import Testing

/// A session's event stream against a live server: states in order, pulses after their state, the end, refusals,
/// and reconnection across a server restart without a repeated version.
@Suite struct SessionEventsTests {
    @Test func statesAndPulsesArriveInOrderAndTheEndFinishesTheStream() async throws {
        let server = try LiveServer()
        let todo = try await server.client().createSession(reactor: "todo", as: TodoReactor.self, id: "list")
        let recorder = SequenceRecorder(todo.events())
        try await recorder.wait("the current state") { $0.count == 3 }
        _ = try await todo.sendAndWait(.add(title: "milk"))
        _ = try await todo.sendAndWait(.add(title: " "))
        _ = try await todo.sendAndWait(.add(title: ""))
        try await todo.delete()
        let recording = try await recorder.waitUntilFinished("the end of the stream")
        let alert = "\"A todo needs a title.\""
        #expect(
            recording.elements.map(describe) == [
                "connecting", "connected",
                #"state 0 {"items":[],"nextID":1,"alert":null}"#,
                #"state 1 {"items":[{"id":1,"title":"milk","done":false}],"nextID":2,"alert":null}"#,
                #"state 2 {"items":[{"id":1,"title":"milk","done":false}],"nextID":2,"alert":"A todo needs a title."}"#,
                "pulse alert=\(alert) #1",
                // The same text again is still a pulse: it must reach the client every time.
                #"state 3 {"items":[{"id":1,"title":"milk","done":false}],"nextID":2,"alert":"A todo needs a title."}"#,
                "pulse alert=\(alert) #2",
                "ended: session deleted",
            ])
    }

    @Test func statesOnlyEndNormallyWhenTheSessionIsDeleted() async throws {
        let server = try LiveServer()
        let counter = try await server.client().createSession(reactor: "counter", as: CounterReactor.self)
        let recorder = SequenceRecorder(throwing: counter.states())
        try await recorder.wait("the current state") { $0.count == 1 }
        _ = try await counter.sendAndWait(.increase)
        try await recorder.wait("version 1") { $0.count == 2 }
        try await counter.delete()
        let recording = try await recorder.waitUntilFinished("the end")
        #expect(recording.error == nil)
        #expect(recording.elements.map(\.version) == [0, 1])
        #expect(recording.elements.map(\.state.value) == [0, 1])
    }

    @Test func anUnknownSessionFailsAtOnceWithoutRetrying() async throws {
        let server = try LiveServer()
        let ghost = server.client().session("ghost", as: CounterReactor.self)
        let events = SequenceRecorder(ghost.events())
        let recording = try await events.waitUntilFinished("the refusal")
        #expect(recording.elements.map(describe) == ["connecting", "failed: 404 unknown_session"])
        let states = SequenceRecorder(throwing: ghost.states())
        let thrown = try await states.waitUntilFinished("the refusal")
        guard case .server(404, .unknownSession, let message)? = thrown.error else {
            Issue.record("got \(thrown)")
            return
        }
        #expect(message.contains("ghost"))
    }

    @Test func selectStreamsOnlyThePartAskedFor() async throws {
        let server = try LiveServer()
        let todo = try await server.client().createSession(reactor: "todo", as: TodoReactor.self)
        let recorder = SequenceRecorder(todo.events(select: "/nextID", as: Int.self))
        try await recorder.wait("the current value") { $0.count == 3 }
        _ = try await todo.sendAndWait(.add(title: "a"))
        _ = try await todo.sendAndWait(.add(title: ""))
        _ = try await todo.sendAndWait(.add(title: "b"))
        try await recorder.wait("nextID 3") { $0.map(describe).contains("state 3 3") }
        // Version 2 left nextID alone, so it is not sent; nor is its alert pulse, which is not part of /nextID.
        #expect(recorder.elements.map(describe) == ["connecting", "connected", "state 0 1", "state 1 2", "state 3 3"])
    }

    /// Stop the server (the stream drops), fail to reach it once (the wait doubles), start a new one on the same
    /// port over the same data: the stream resumes from its `Last-Event-ID`, so version 2 is not shown again and
    /// a version made while the client was away arrives as the current state.
    @Test func aServerRestartIsFollowedWithoutARepeatedVersion() async throws {
        let server = try LiveServer()
        let clock = TestClock()
        let client = server.client {
            $0.clock = clock
            $0.reconnect = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), jitter: 0)
        }
        let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "restarted")
        let recorder = SequenceRecorder(counter.events())
        /// Waits until `text` has been reported `times` times.
        func reported(_ text: String, times: Int = 1) async throws {
            try await recorder.wait("\(text) × \(times)") { $0.map(describe).filter { $0 == text }.count >= times }
        }
        try await reported(#"state 0 {"value":0}"#)
        _ = try await counter.sendAndWait(.increase)
        _ = try await counter.sendAndWait(.increase)
        try await reported(#"state 2 {"value":2}"#)

        try await server.stop()
        try await reported("reconnecting after 1000 ms (transport)")
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await reported("reconnecting after 2000 ms (transport)")
        try server.start()
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(2))
        try await reported("connected", times: 2)
        // Nothing changed while the client was away: the server has nothing newer than version 2 to send.
        _ = try await counter.sendAndWait(.increase)
        try await reported(#"state 3 {"value":3}"#)

        try await server.stop()
        try await reported("reconnecting after 1000 ms (transport)", times: 2)
        try server.start()
        _ = try await counter.sendAndWait(.increase)
        await clock.waitForSleepers()
        await clock.advance(by: .seconds(1))
        try await reported(#"state 4 {"value":4}"#)
        #expect(
            recorder.elements.map(describe) == [
                "connecting", "connected", #"state 0 {"value":0}"#, #"state 1 {"value":1}"#, #"state 2 {"value":2}"#,
                "reconnecting after 1000 ms (transport)", "connecting",
                "reconnecting after 2000 ms (transport)", "connecting", "connected",
                #"state 3 {"value":3}"#,
                "reconnecting after 1000 ms (transport)", "connecting", "connected",
                #"state 4 {"value":4}"#,
            ])
    }

    @Test func leavingTheLoopClosesTheConnection() async throws {
        let server = try LiveServer()
        let client = server.client()
        let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "watched")
        let admin = client.admin(token: LiveServer.adminToken)
        for try await update in counter.states() {
            #expect(update.version == 0)
            #expect(try await admin.sessions().first?.subscribers == 1)
            break
        }
        // The server learns of the close from the socket; ask until it has (each question is a round trip).
        var subscribers = 1
        for _ in 0..<2000 where subscribers != 0 {
            subscribers = try await admin.sessions().first?.subscribers ?? -1
        }
        #expect(subscribers == 0)
    }
}
