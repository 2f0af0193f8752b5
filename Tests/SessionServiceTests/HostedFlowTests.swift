import Foundation
import Logs
import ReactorServerTesting
import Reactors
import ReactorsTesting
import SessionService
import Testing

/// A search box as ReactorKit users write one: typing is debounced, repeats dropped, a new query replaces the
/// results in flight, every action logged, and the session opens with a note.
struct TypeaheadReactor: Reactor {
    enum Action: Codable, Sendable, Equatable { case query(text: String) }
    enum Mutation: Codable, Sendable { case setQuery(String), setResults([String]), note(String) }
    struct State: Codable, Sendable, Equatable {
        var query = ""
        var results: [String] = []
        var notes: [String] = []
    }

    let initialState = State()
    let clock: TestClock

    func mutate(action: Action) -> Effect<Mutation> {
        guard case .query(let text) = action else { return .none }
        return .concat([
            .just(.setQuery(text)),
            Effect.just(.setResults([text + " 1", text + " 2"])).delay(for: .seconds(1), clock: clock),
        ])
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .setQuery(let query): state.query = query
        case .setResults(let results): state.results = results
        case .note(let note): state.notes.append(note)
        }
        return state
    }

    func transform(action: Flow<Action>) -> Flow<Action> {
        action.debounce(for: .milliseconds(300), clock: clock).removeDuplicates().flatMapLatest().debug("action")
    }

    func transform(mutation: Flow<Mutation>) -> Flow<Mutation> { mutation.startWith(.note("opened")) }
}

@Suite(.offThePool) struct HostedFlowTests {
    static func server(_ clock: InjectedClock = InjectedClock(), dataDirectory: String? = nil) throws -> TestServer {
        try TestServer(dataDirectory: dataDirectory, clock: clock) { _ in
        } catalog: { catalog in
            catalog.register("typeahead") { TypeaheadReactor(clock: clock.reactorClock) }
        }
    }

    static func state(_ server: TestServer, _ id: String) throws -> (version: Int?, state: [String: Any]) {
        let session = try server.request("GET", "/sessions/\(id)").json()
        return (session["version"] as? Int, session["state"] as? [String: Any] ?? [:])
    }

    @Test func typingIsDebouncedOverHTTPAndTheDebugLinesNameTheSession() async throws {
        let server = try Self.server()
        let clock = server.clock.reactorClock
        let id = try server.createSession("typeahead", id: "box")
        // startWith: the session's first version is the note.
        let created = try Self.state(server, id)
        #expect(created.version == 1)
        #expect(created.state["notes"] as? [String] == ["opened"])

        let query: @Sendable (String) -> String = { text in #"{"type":"query","text":"\#(text)"}"# }
        for text in ["s", "sw"] {
            #expect(try server.request("POST", "/sessions/\(id)/actions", body: query(text)).status == 202)
        }
        let waiting = Task {
            try await offPool { try server.request("POST", "/sessions/\(id)/actions?wait=true", body: query("swift")) }
        }
        try await eventually("swift to be accepted and held alone") {
            let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
            return (log["actions"] as? [Any])?.count == 3 && clock.sleeperCount == 1
        }
        await server.clock.advance(by: .milliseconds(300))
        await clock.waitForSleepers()
        #expect(try Self.state(server, id).state["query"] as? String == "swift")
        await server.clock.advance(by: .seconds(1))
        let answer = try await waitFor("the waiting action to be answered") { try await waiting.value }
        #expect(answer.status == 200)
        let state = try #require(try answer.json()["state"] as? [String: Any])
        #expect(state["results"] as? [String] == ["swift 1", "swift 2"])
        #expect(state["notes"] as? [String] == ["opened"])

        // Only swift got through the debounce, and its line names the session.
        let next = try await server.logs.next("the debug line of swift") { $0.message.hasPrefix("flow action -> next") }
        #expect(next.message == #"flow action -> next(query(text: "swift"))"#)
        #expect(next.fields.first { $0.key == "session" }?.value == "box")
        #expect(next.level == .info)
        let replaced = [#"text: "s")"#, #"text: "sw")"#]
        #expect(!server.logs.values.contains { record in replaced.contains { record.message.contains($0) } })
        #expect(server.logs.values.contains { $0.message == "flow action -> started" })

        // Deleting the session stops its runtime: a held query is dropped, and the flow says it stopped.
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: query("late")).status == 202)
        await clock.waitForSleepers()
        #expect(try server.request("DELETE", "/sessions/\(id)").status == 204)
        let stopped = try await server.logs.next("the flow to stop") { $0.message == "flow action -> stopped" }
        #expect(stopped.fields.first { $0.key == "session" }?.value == "box")
        try await eventually("the held query's hold to end") { clock.sleeperCount == 0 }
    }

    @Test func startWithRunsOnceAndNotAgainWhenTheSessionComesBack() throws {
        try withTemporaryDirectory("flow") { directory in
            do {
                let server = try Self.server(dataDirectory: directory)
                _ = try server.createSession("typeahead", id: "kept")
                let store = server.server.service.store
                // Loaded back from its snapshot after creation: the note is not added again.
                #expect(try Self.state(server, "kept").state["notes"] as? [String] == ["opened"])
                #expect(store.passivate(idleBefore: .max) == 1)
                #expect(try Self.state(server, "kept").state["notes"] as? [String] == ["opened"])
            }
            let restarted = try Self.server(dataDirectory: directory)
            let after = try Self.state(restarted, "kept")
            #expect(after.version == 1)
            #expect(after.state["notes"] as? [String] == ["opened"])
        }
    }
}
