import Examples
import Foundation
import JSONCodec
import ReactorClient
import Testing

/// Requests against a live server: sessions, actions with and without `wait`, and errors mapped to their codes.
@Suite struct ReactorClientTests {
    @Test func createSendWaitGetDelete() async throws {
        let server = try LiveServer()
        let client = server.client()
        let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "c1")
        #expect(counter.id == "c1")
        #expect(counter.created == VersionedState(version: 0, state: CounterReactor.State(value: 0)))
        #expect(counter.token == nil)
        #expect(try await counter.send(.increase) == 1)
        let reduced = try await counter.sendAndWait(.increase)
        #expect(reduced.seq == 2)
        #expect(reduced.reduced == VersionedState(version: 2, state: .init(value: 2)))
        #expect(try await counter.sendAndWait(.decrease).state == .init(value: 1))
        #expect(try await counter.get() == VersionedState(version: 3, state: .init(value: 1)))
        try await counter.delete()
        do {
            _ = try await counter.get()
            Issue.record("a deleted session answered")
        } catch {
            guard case .server(404, .unknownSession, let message) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.hasPrefix("no session with id \"c1\""))
        }
    }

    @Test func actionsWithPayloadsUseTheServersCoding() async throws {
        let server = try LiveServer()
        let todo = try await server.client().createSession(reactor: "todo", as: TodoReactor.self)
        #expect(todo.id.count >= 22)
        _ = try await todo.send(.add(title: "milk"))
        let result = try await todo.sendAndWait(.toggle(id: 1))
        #expect(result.state.items == [TodoReactor.Item(id: 1, title: "milk", done: true)])
        #expect(result.state.nextID == 2)
    }

    @Test func serverErrorsArriveAsTypedCodesWithTheServersMessage() async throws {
        let server = try LiveServer()
        let client = server.client()
        do {
            _ = try await client.createSession(reactor: "abacus", as: CounterReactor.self)
            Issue.record("an unknown reactor was accepted")
        } catch {
            guard case .server(404, .unknownReactor, let message) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.contains("abacus"))
        }
        _ = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "taken")
        do {
            _ = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "taken")
            Issue.record("a taken id was accepted")
        } catch {
            #expect(error.code == .sessionExists)
            #expect(!error.isTransient)
        }
        do {
            _ = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "not valid!")
            Issue.record("an invalid id was accepted")
        } catch {
            #expect(error.code == .invalidID)
        }
        // A todo handle on a counter session: its actions do not decode there.
        let wrong = client.session("taken", as: TodoReactor.self)
        do {
            _ = try await wrong.send(.add(title: "x"))
            Issue.record("a todo action was accepted by a counter")
        } catch {
            guard case .server(422, .unknownAction, let message) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.contains("add"))
        }
        // Its state does not decode as a todo list either: the answer is unreadable, not a crash.
        do {
            _ = try await wrong.get()
            Issue.record("a counter state decoded as a todo list")
        } catch {
            guard case .invalidResponse(let message) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.contains("TodoReactor"))
        }
    }

    @Test func aServerThatIsNotThereIsATransportError() async throws {
        let port = try LiveServer().port
        // The server above is gone: nothing listens on its port.
        let client = ReactorClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        do {
            _ = try await client.reactors()
            Issue.record("a request to a closed port succeeded")
        } catch {
            guard case .transport = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(error.isTransient)
        }
    }

    @Test func cancellingTheCallerCancelsTheRequest() async throws {
        // The waits below never end on the server: do not let its shutdown wait for them.
        let server = try LiveServer { $0.http.shutdownDeadlineSeconds = 0 }
        let fruit = try await server.client().createSession(reactor: "fruit", as: FruitReactor.self)
        // The fruit's 500 ms wait runs on a test clock nobody advances: this answer never comes by itself.
        let waiting = Task { try await fruit.sendAndWait(.apple) }
        // Once the server shows the spinner, the request is certainly on its way.
        for try await update in fruit.states() where update.state.isLoading { break }
        waiting.cancel()
        await #expect(throws: ReactorClientError.cancelled) { try await waiting.value }
        let before = Task { try await fruit.sendAndWait(.banana) }
        before.cancel()
        await #expect(throws: ReactorClientError.cancelled) { try await before.value }
    }

    @Test func reactorsListsWhatTheServerHosts() async throws {
        let server = try LiveServer()
        let reactors = try await server.client().reactors()
        #expect(reactors.map(\.name) == ["counter", "fruit", "profile", "todo", "reminders"])
        #expect(reactors[0].initialState == ["value": 0])
        #expect(reactors[0].json["actions"]?.arrayValue?.count == 2)
    }
}
