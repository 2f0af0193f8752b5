import Examples
import Foundation
import ReactorClient
import Reactors
import Testing

/// The ReactorKit-shaped façade against a live server: `send`, `state`, `currentState`, `pulse(\.$alert)`,
/// ordering, errors, and what stopping and releasing it do to the HTTP stream.
@Suite struct RemoteReactorTests {
    /// Asks the server (bounded, one round trip per question) until the session has `count` subscribers.
    static func waitForSubscribers(_ count: Int, _ admin: ReactorAdmin, _ id: String) async throws {
        var seen = -1
        for _ in 0..<2000 {
            seen = try await admin.sessions().first { $0.id == id }?.subscribers ?? -1
            if seen == count { return }
        }
        Issue.record("session \(id) kept \(seen) subscribers, expected \(count)")
    }

    @Test func sendStateCurrentStateAndPulses() async throws {
        let server = try LiveServer()
        let session = try await server.client().createSession(reactor: "todo", as: TodoReactor.self)
        let reactor = try await RemoteReactor(session)
        #expect(reactor.currentState == TodoReactor.State())
        let states = SequenceRecorder(reactor.state)
        let alerts = SequenceRecorder(reactor.pulse(\.$alert))
        let connection = SequenceRecorder(reactor.connection)
        try await connection.wait("connected") { $0.last == .connected }

        reactor.send(.add(title: "milk"))
        reactor.send(.add(title: ""))
        reactor.send(.add(title: "eggs"))
        // Queued behind the three above, so its answer shows all of them, in call order.
        let result = try await reactor.sendAndWait(.add(title: ""))
        #expect(result.seq == 4)
        #expect(result.state.items.map(\.title) == ["milk", "eggs"])
        try await states.wait("the fourth state") {
            $0.last?.items.count == 2 && $0.last?.alert != nil && $0.count >= 2
        }
        try await alerts.wait("two equal alerts") { $0.count == 2 }
        #expect(alerts.elements == ["A todo needs a title.", "A todo needs a title."])
        #expect(states.elements.first == TodoReactor.State())
        #expect(reactor.currentState.items.map(\.title) == ["milk", "eggs"])
        #expect(reactor.currentVersion == 4)
        #expect(reactor.connectionState == .connected)
        #expect(reactor.lastError == nil)

        let named = SequenceRecorder(reactor.pulse(named: "alert", as: String?.self))
        reactor.send(.remove(id: 42))
        try await named.wait("the alert by name") { $0 == ["There is no todo with id 42 to remove."] }
    }

    @Test func aFailedSendIsReportedNotThrown() async throws {
        let server = try LiveServer()
        let client = server.client()
        let session = try await client.createSession(reactor: "counter", as: CounterReactor.self)
        let reactor = RemoteReactor(session, initialState: CounterReactor.State())
        let errors = SequenceRecorder(reactor.errors)
        let connection = SequenceRecorder(reactor.connection)
        try await connection.wait("connected") { $0.last == .connected }
        try await client.session(session.id, as: CounterReactor.self).delete()
        reactor.send(.increase)
        try await errors.wait("the failure") { $0.count == 1 }
        #expect(errors.elements.map(\.code) == [.unknownSession])
        #expect(reactor.lastError?.code == .unknownSession)
        // The deletion also ended the stream.
        try await connection.wait("the end") { $0.last == .ended(.finished(reason: "session deleted")) }
        var states: [Int] = []
        for await state in reactor.state { states.append(state.value) }
        #expect(states == [0])
    }

    @Test func stopClosesTheStreamAndFinishesEverySequence() async throws {
        let server = try LiveServer()
        let client = server.client()
        let admin = client.admin(token: LiveServer.adminToken)
        let session = try await client.createSession(reactor: "counter", as: CounterReactor.self)
        let reactor = RemoteReactor(session, initialState: CounterReactor.State())
        let states = SequenceRecorder(reactor.state)
        try await SequenceRecorder(reactor.connection).wait("connected") { $0.last == .connected }
        try await Self.waitForSubscribers(1, admin, session.id)
        reactor.stop()
        try await states.waitUntilFinished("the state sequence")
        #expect(reactor.connectionState == .ended(.stopped))
        try await Self.waitForSubscribers(0, admin, session.id)
        await #expect(throws: ReactorClientError.cancelled) { try await reactor.sendAndWait(.increase) }
        #expect(try await session.get().version == 0)
    }

    @Test func releasingTheReactorClosesTheStream() async throws {
        let server = try LiveServer()
        let client = server.client()
        let admin = client.admin(token: LiveServer.adminToken)
        let session = try await client.createSession(reactor: "counter", as: CounterReactor.self)
        var reactor: RemoteReactor<CounterReactor>? = RemoteReactor(session, initialState: CounterReactor.State())
        try await Self.waitForSubscribers(1, admin, session.id)
        let connection = SequenceRecorder(reactor!.connection)
        reactor = nil
        try await connection.waitUntilFinished("the end of the connection states")
        #expect(connection.elements.last == .ended(.stopped))
        try await Self.waitForSubscribers(0, admin, session.id)
    }
}
