import Foundation
import JSONCodec
import ReactorServerTesting
import Reactors
import SessionService
import Testing

// Two versions of one reactor, registered under the same name ("board") by servers run one after the
// other on the same storage: what an upgrade (and a rollback) of a deployed reactor does to its sessions.

/// Version 1: `Mutation` is the wire `Action`, the state a number and a team name.
struct BoardV1: Reactor {
    enum Action: Codable, Sendable {
        case score(points: Int)
        case rename(name: String)
        case noop
    }

    struct State: Codable, Sendable {
        struct Team: Codable, Sendable { var name = "A" }
        var home = 0
        var team = Team()
    }

    let initialState = State()

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .score(let points): state.home += points
        case .rename(let name): state.team.name = name
        case .noop: break
        }
        return state
    }
}

/// Version 1 with fields added and no code: `away` and `team.color` (defaults), `note` (optional).
struct BoardAdded: Reactor {
    typealias Action = BoardV1.Action

    struct State: Codable, Sendable {
        struct Team: Codable, Sendable {
            var name = "A"
            var color = "red"
        }

        var home = 0
        var away = 0
        var team = Team()
        var note: String? = "unset"
    }

    let initialState = State()

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .score(let points): state.home += points
        case .rename(let name): state.team.name = name
        case .noop: break
        }
        return state
    }
}

/// Version 2: `home` changed type (a number → `{"value": N}`), a field no default can fill (`label`, made
/// from the old data), and a `Mutation` of its own apart from the wire `Action` (`score` became `addPoints`;
/// `noop` is dropped from stored history).
struct BoardV2: Reactor {
    typealias Action = BoardV1.Action

    enum Mutation: Codable, Sendable {
        case addPoints(Int)
        case setName(String)
    }

    struct State: Codable, Sendable {
        struct Points: Codable, Sendable { var value = 0 }
        struct Team: Codable, Sendable {
            var name = "A"
            var color = "red"
        }

        var home = Points()
        var team = Team()
        var label = "A: 0"
    }

    static var storageVersion: Int { 2 }

    let initialState = State()

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .score(let points): .just(.addPoints(points))
        case .rename(let name): .just(.setName(name))
        case .noop: .none
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .addPoints(let points): state.home.value += points
        case .setName(let name): state.team.name = name
        }
        state.label = "\(state.team.name): \(state.home.value)"
        return state
    }

    func migrate(state decoder: any Decoder, from version: Int) throws -> State? {
        let old = try BoardV1.State(from: decoder)
        return State(
            home: .init(value: old.home), team: .init(name: old.team.name, color: "red"),
            label: "\(old.team.name): \(old.home)")
    }

    func migrate(mutation decoder: any Decoder, from version: Int) throws -> [Mutation]? {
        switch try BoardV1.Action(from: decoder) {
        case .score(let points): [.addPoints(points)]
        case .rename(let name): [.setName(name)]
        case .noop: []
        }
    }
}

/// An incompatible change without a migration: `home` is a string now, and the version still 1.
struct BoardBroken: Reactor {
    typealias Action = BoardV1.Action

    struct State: Codable, Sendable {
        var home = ""
    }

    let initialState = State()
}

extension TestServer {
    /// A server on `place` hosting `make` as "board".
    convenience init<R: Reactor>(
        storage place: StoragePlace, board make: @escaping @Sendable () -> R,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        try self.init(storage: place, configure: configure) { $0.register("board", make) }
    }

    /// Posts `action` to session `id` and waits for its states; the answer's JSON.
    @discardableResult
    func act(_ id: String, _ action: String) throws -> [String: Any] {
        let response = try request("POST", "/sessions/\(id)/actions?wait=true", body: action)
        guard response.status == 200 else {
            throw TestFailure("action \(action) on \(id): \(response.status) \(response.text)")
        }
        return try response.json()
    }

    /// `GET /sessions/{id}`'s JSON, requiring 200.
    func state(_ id: String) throws -> [String: Any] {
        let response = try request("GET", "/sessions/\(id)")
        guard response.status == 200 else { throw TestFailure("GET \(id): \(response.status) \(response.text)") }
        return try response.json()
    }
}

/// Runs `reactor-server verify` in process with the place's flags and `make` as "board".
func verifyBoard<R: Reactor>(_ place: StoragePlace, _ make: @escaping @Sendable () -> R) -> (
    status: Int32, report: String
) {
    ReactorServerCommand.verify(
        arguments: ["reactor-server", "verify", "--log-level", "warning"] + place.arguments, environment: [:]
    ) { _ in
        var catalog = ReactorCatalog()
        catalog.register("board", make)
        return catalog
    }
}

/// Stores sessions `one` (version 3: score 3, rename B, score 2) and `two` (version 2: noop, score 4) with version 1.
func storeVersionOneSessions(_ place: StoragePlace) throws {
    let server = try TestServer(storage: place, board: { BoardV1() })
    for id in ["one", "two"] { _ = try server.createSession("board", id: id) }
    try server.act("one", #"{"type":"score","points":3}"#)
    try server.act("one", #"{"type":"rename","name":"B"}"#)
    try server.act("one", #"{"type":"score","points":2}"#)
    try server.act("two", #"{"type":"noop"}"#)
    try server.act("two", #"{"type":"score","points":4}"#)
}

@Suite(.serialized) struct MigrationTests {
    @Test(arguments: TestStorage.all)
    func aFieldAddedWithADefaultLoadsWithoutCodeAndARollbackStillLoads(storage: TestStorage) async throws {
        try await storage.withPlace("added") { place in
            try storeVersionOneSessions(place)
            let verified = verifyBoard(place) { BoardAdded() }
            #expect(verified.status == 0, "\(verified.report)")
            #expect(
                verified.report.contains(
                    "board (storage version 1): 0 load as stored, 2 load after migration, 0 would not load"))
            #expect(verified.report.contains("away, team.color from initialState"))
            do {
                let server = try TestServer(storage: place, board: { BoardAdded() })
                let state = try #require(try server.state("one")["state"] as? [String: Any])
                #expect(state["home"] as? Int == 5)
                #expect(state["away"] as? Int == 0)
                #expect(state["team"] as? [String: String] == ["name": "B", "color": "red"])
                // Absent from the data, an optional stays nil: not the initial state's "unset".
                #expect(state["note"] == nil)
                let next = try #require(
                    try server.act("one", #"{"type":"score","points":1}"#)["state"] as? [String: Any])
                #expect(next["home"] as? Int == 6)
                #expect(try server.state("two")["version"] as? Int == 2)
            }
            // Rolled back: the first version ignores the members the second one stored.
            let server = try TestServer(storage: place, board: { BoardV1() })
            let one = try server.state("one")
            #expect(one["version"] as? Int == 4)
            #expect((one["state"] as? [String: Any])?["home"] as? Int == 6)
            #expect(try server.state("two")["version"] as? Int == 2)
        }
    }

    @Test(arguments: TestStorage.all)
    func aNewStorageVersionMigratesStatesRenamedMutationsAndChangedTypes(storage: TestStorage) async throws {
        try await storage.withPlace("migrated") { place in
            try storeVersionOneSessions(place)
            let verified = verifyBoard(place) { BoardV2() }
            #expect(verified.status == 0, "\(verified.report)")
            #expect(
                verified.report.contains(
                    "board (storage version 2): 0 load as stored, 2 load after migration, 0 would not load"))
            do {
                let server = try TestServer(storage: place, board: { BoardV2() })
                let one = try server.state("one")
                #expect(one["version"] as? Int == 3)
                let state = try #require(one["state"] as? [String: Any])
                #expect(state["home"] as? [String: Int] == ["value": 5])
                #expect(state["label"] as? String == "B: 5")
                #expect(state["team"] as? [String: String] == ["name": "B", "color": "red"])
                // A dropped mutation keeps its version: two is at version 2 with only the score.
                let two = try server.state("two")
                #expect(two["version"] as? Int == 2)
                #expect((two["state"] as? [String: Any])?["home"] as? [String: Int] == ["value": 4])
                let next = try #require(
                    try server.act("one", #"{"type":"score","points":1}"#)["state"] as? [String: Any])
                #expect(next["label"] as? String == "B: 6")
                // Time travel over migrated history, in today's shape.
                let past = try server.request("GET", "/admin/sessions/one/versions/1", headers: server.admin)
                #expect(past.status == 200, "\(past.text)")
                #expect((try past.json()["state"] as? [String: Any])?["home"] as? [String: Int] == ["value": 3])
                // A fork at a migrated version starts in today's shape and goes on with today's reactor.
                let fork = try server.request(
                    "POST", "/admin/sessions/one/fork", headers: server.admin, body: #"{"version": 2, "id": "forked"}"#)
                #expect(fork.status == 201, "\(fork.text)")
                let forked = try #require(
                    try server.act("forked", #"{"type":"score","points":10}"#)["state"] as? [String: Any])
                #expect(forked["label"] as? String == "B: 13")
            }
            // Loaded again: version-1 records before, version-2 records after; both read by what wrote them.
            let verifiedAgain = verifyBoard(place) { BoardV2() }
            #expect(verifiedAgain.status == 0, "\(verifiedAgain.report)")
            let server = try TestServer(storage: place, board: { BoardV2() })
            let one = try server.state("one")
            #expect(one["version"] as? Int == 4)
            #expect((one["state"] as? [String: Any])?["label"] as? String == "B: 6")
            #expect(((try server.state("forked"))["state"] as? [String: Any])?["label"] as? String == "B: 13")
            let old = try server.request("GET", "/admin/sessions/one/versions/3", headers: server.admin)
            #expect((try old.json()["state"] as? [String: Any])?["label"] as? String == "B: 5")
        }
    }

    @Test(arguments: TestStorage.all)
    func anUnmigratableChangeIsNamedByVerifyAnswers409AndARollbackLoadsEverything(storage: TestStorage) async throws {
        try await storage.withPlace("broken") { place in
            try storeVersionOneSessions(place)
            let verified = verifyBoard(place) { BoardBroken() }
            #expect(verified.status == 1, "\(verified.report)")
            #expect(
                verified.report.contains(
                    "board (storage version 1): 0 load as stored, 0 load after migration, 2 would not load"))
            #expect(
                verified.report.contains(
                    #"would not load one: its snapshot at version 0 does not decode with reactor "board""#))
            #expect(verified.report.contains(#""home": expected a string"#))
            do {
                let server = try TestServer(storage: place, board: { BoardBroken() })
                let answer = try server.request("GET", "/sessions/one")
                #expect(answer.status == 409)
                #expect(answer.text.contains("session_unavailable"))
                #expect(answer.text.contains("does not decode with reactor"))
                let action = try server.request("POST", "/sessions/two/actions", body: #"{"type":"noop"}"#)
                #expect(action.status == 409)
                // Still serving: a new session works, the admin listing names why, /metrics counts by reactor.
                _ = try server.createSession("board", id: "fresh")
                // (Deleted again: stored in the broken shape, the rollback below could not read it.)
                #expect(try server.request("DELETE", "/sessions/fresh").status == 204)
                #expect(try server.adminEntry("one")?["unavailable"] as? String != nil)
                try await eventually("both failures counted") {
                    try server.request("GET", "/metrics").text
                        .contains(#"reactor_session_load_failures_total{reactor="board"} 2"#)
                }
            }
            // Nothing was written or quarantined for good: the version that wrote them loads them all.
            let verifiedBack = verifyBoard(place) { BoardV1() }
            #expect(verifiedBack.status == 0, "\(verifiedBack.report)")
            let server = try TestServer(storage: place, board: { BoardV1() })
            #expect(try server.state("one")["version"] as? Int == 3)
            #expect(try server.state("two")["version"] as? Int == 2)
        }
    }

    /// A session this server's reactor cannot read is refused without being loaded again, also after its entry
    /// changed (a replaced token is a write of it): each load attempt claims and fences the session for nothing.
    @Test(arguments: TestStorage.all)
    func aSessionThisReactorCannotReadStaysRefusedAfterItsEntryIsWritten(storage: TestStorage) async throws {
        try await storage.withPlace("entrywrite") { place in
            let tokenMode: (inout ServerConfiguration) -> Void = { $0.auth.sessions = "token" }
            do {
                let server = try TestServer(storage: place, board: { BoardV1() }, configure: tokenMode)
                #expect(try server.request("POST", "/sessions", body: #"{"reactor":"board","id":"one"}"#).status == 201)
            }
            let server = try TestServer(storage: place, board: { BoardBroken() }, configure: tokenMode)
            let failedLoad = "a stored session cannot be loaded by this server's reactor"
            let replaced = try server.request("POST", "/admin/sessions/one/token", headers: server.admin)
            var token = try #require(try replaced.json()["token"] as? String)
            for round in 1...3 {
                let answer = try server.request("GET", "/sessions/one", headers: [("Authorization", "Bearer \(token)")])
                #expect(answer.status == 409, "round \(round): \(answer.text)")
                #expect(answer.text.contains("does not decode with reactor"))
                let again = try server.request("POST", "/admin/sessions/one/token", headers: server.admin)
                #expect(again.status == 200, "round \(round): \(again.text)")
                token = try #require(try again.json()["token"] as? String)
            }
            #expect(server.logs.values.filter { $0.message.contains(failedLoad) }.count == 1, "loaded once only")
            #expect(try server.adminEntry("one")?["unavailable"] as? String != nil)
        }
    }

    @Test(arguments: TestStorage.all)
    func theServerLogsTheCheckAtStart(storage: TestStorage) async throws {
        try await storage.withPlace("startcheck") { place in
            try storeVersionOneSessions(place)
            let server = try TestServer(storage: place, board: { BoardBroken() }) { $0.storage.checkAtStart = 1 }
            let record = try await server.logs.next(
                "the check at start", where: { $0.message.hasPrefix("checked a sample of 1 of the 2") })
            #expect(record.fields.contains { $0.key == "failed" })
            #expect(server.server.service.context.metrics.loadFailures.count(reactor: "board") == 1)
        }
    }
}
