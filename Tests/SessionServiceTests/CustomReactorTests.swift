import Foundation
import ReactorServerTesting
import Reactors
import SessionService
import Testing

/// A reactor defined only here, hosted by the server as a library: what a package depending on this
/// one does (the README shows the same code).
struct ScoreboardReactor: Reactor {
    // Synthesized Codable: on the wire `{"type": "score", "team": "home", "points": 3}` and `{"type": "reset"}`.
    enum Action: Codable, Sendable {
        case score(team: String, points: Int)
        case reset
    }

    struct State: Codable, Sendable, Equatable {
        var home = 0
        var away = 0
    }

    let initialState = State()

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .score(let team, let points):
            if team == "home" { state.home += points } else { state.away += points }
        case .reset:
            state = State()
        }
        return state
    }
}

@Suite(.offThePool) struct CustomReactorTests {
    @Test func aPackageHostsItsOwnReactorInAFewLines() async throws {
        var catalog = ReactorCatalog()
        catalog.register(
            "scoreboard", summary: "Points per team.", exampleActions: [#"{"type":"score","team":"home","points":3}"#]
        ) {
            ScoreboardReactor()
        }
        var configuration = ServerConfiguration()
        configuration.http.port = 0
        configuration.admin.token = "t"
        configuration.storage.memoryOnly = true
        let server = try ReactorServer(catalog: catalog, configuration: configuration)
        let port = try server.start().port

        let client = try TestClient(port: port)
        #expect(try client.request("POST", "/sessions", body: #"{"reactor":"scoreboard","id":"game"}"#).status == 201)
        #expect(
            try client.request("POST", "/sessions/game/actions", body: #"{"type":"score","team":"home","points":3}"#)
                .status == 202)
        let after = try client.request(
            "POST", "/sessions/game/actions?wait=true", body: #"{"type":"score","team":"away","points":2}"#)
        #expect(after.text == #"{"seq":2,"version":2,"state":{"home":3,"away":2}}"# + "\n")
        let unknown = try client.request("POST", "/sessions/game/actions", body: #"{"type":"foul"}"#)
        #expect(unknown.errorCode == "unknown_action")
        #expect(unknown.errorMessage?.contains("foul") == true)
        let invalid = try client.request("POST", "/sessions/game/actions", body: #"{"type":"score","team":"home"}"#)
        #expect(invalid.errorCode == "invalid_action")
        #expect(invalid.errorMessage?.contains("points") == true)
        #expect(
            try client.request("POST", "/sessions/game/actions?wait=true", body: #"{"type":"reset"}"#).text
                == #"{"seq":3,"version":3,"state":{"home":0,"away":0}}"# + "\n")
        let listing = try client.request("GET", "/reactors").text
        #expect(listing.contains(#""name":"scoreboard""#))
        #expect(!listing.contains("counter"), "only what the package registered")
        server.shutdown()
        try await waitFor("the server to stop") { try await offPool { server.waitUntilStopped() } }
    }
}
