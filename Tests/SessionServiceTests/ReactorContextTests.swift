import Foundation
import Logs
import ReactorServerTesting
import Reactors
import SessionService
import Testing

/// A reactor whose `check` effect waits a second, reads the state *then* and sends its own session the count
/// it saw: the wait lets clients change the state meanwhile.
struct TallyReactor: Reactor {
    struct Params: Codable, Sendable { var label: String }

    enum Action: Codable, Sendable, Equatable {
        case check
        case bump
        case record(seen: Int)
    }

    struct State: Codable, Sendable, Equatable {
        var label: String
        var count = 0
        var seen: Int?
    }

    let context: ReactorContext<TallyReactor, Params>

    var initialState: State { State(label: context.params.label) }

    func mutate(action: Action) -> Effect<Action> {
        guard case .check = action else { return .just(action) }
        return .run { [context] _ in
            try await context.clock.sleep(for: .seconds(1))
            let count = context.currentState.count
            context.logger.info("tally checked", ["count": "\(count)"])
            try await context.send(.record(seen: count))
        }
    }

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .check: break
        case .bump: state.count += 1
        case .record(let seen): state.seen = seen
        }
        return state
    }
}

/// The session's context as a hosted reactor reaches it, over real sockets with every backend: the state
/// read from an effect is the state now, and the action an effect sends is queued, journaled and listed in
/// the action log as `"from": "effect"`, also after a restart; the context's logger tags the session.
@Suite(.offThePool) struct ReactorContextTests {
    static func register(_ catalog: inout ReactorCatalog) {
        catalog.register("tally", params: TallyReactor.Params.self) { context in TallyReactor(context: context) }
    }

    static func actionLog(_ server: TestServer, _ id: String) throws -> [[String: Any]] {
        let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
        return try #require(log["actions"] as? [[String: Any]])
    }

    @Test(arguments: TestStorage.all)
    func anEffectReadsTheStateNowAndSendsItsSessionAnAction(storage: TestStorage) async throws {
        try await storage.withPlace("context") { place in
            do {
                let server = try TestServer(storage: place, catalog: Self.register)
                let body = #"{"reactor":"tally","id":"t","params":{"label":"desk"}}"#
                #expect(try server.request("POST", "/sessions", body: body).status == 201)
                #expect(try server.request("POST", "/sessions/t/actions", body: #"{"type":"check"}"#).status == 202)
                try await eventually("the check to wait") { server.clock.reactorClock.sleeperCount == 1 }
                for _ in 0..<2 {
                    let bump = try server.request("POST", "/sessions/t/actions?wait=true", body: #"{"type":"bump"}"#)
                    #expect(bump.status == 200)
                }
                await server.clock.advance(by: .seconds(1))
                try await eventually("the effect's action to be reduced") {
                    let state = try server.request("GET", "/sessions/t").json()["state"] as? [String: Any]
                    return state?["seen"] as? Int == 2
                }
                let log = try Self.actionLog(server, "t")
                #expect(log.map { $0["seq"] as? Int } == [1, 2, 3, 4])
                #expect(log.map { $0["from"] as? String } == [nil, nil, nil, "effect"])
                let sent = try #require(log.last?["action"] as? [String: Any])
                #expect(sent["type"] as? String == "record" && sent["seen"] as? Int == 2)
                let line = try #require(server.logs.values.first { $0.message == "tally checked" })
                #expect(line.fields.contains { $0.key == "session" && $0.value == .string("t") })
                #expect(line.fields.contains { $0.key == "count" && $0.value == .string("2") })
            }
            // Journaled: after a restart the log still says where the action came from, the state keeps it.
            let server = try TestServer(storage: place, catalog: Self.register)
            let state = try #require(try server.request("GET", "/sessions/t").json()["state"] as? [String: Any])
            #expect(state["label"] as? String == "desk" && state["count"] as? Int == 2 && state["seen"] as? Int == 2)
            #expect(try Self.actionLog(server, "t").map { $0["from"] as? String } == [nil, nil, nil, "effect"])
            let next = try server.request("POST", "/sessions/t/actions", body: #"{"type":"bump"}"#)
            #expect(try next.json()["seq"] as? Int == 5)
        }
    }

    /// The OpenAPI document describes each reactor's params, and `"from"` in the action log.
    @Test func theOpenAPIDocumentDescribesParams() throws {
        let server = try TestServer(catalog: Self.register)
        let document = try server.request("GET", "/openapi.json").text
        #expect(document.contains(#""profile.Params""#))
        #expect(document.contains(#""tally.Params""#))
        #expect(document.contains(#""invalid_params""#))
        #expect(document.contains(#""from""#))
        let reactors = try server.request("GET", "/reactors").text
        #expect(reactors.contains(#""params":{"userID":1}"#))
    }
}
