// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// README.md's "Write and host your own reactor" example, compiled as it is shown (DocSnippetsTests holds the docs
// to the files of this target). Built, never run: it would listen on port 8080.
import Foundation      // exit, ProcessInfo
import Reactors        // the Reactor protocol
import SessionService  // ReactorCatalog, ServerConfiguration, ReactorServerCommand

struct ScoreboardReactor: Reactor {
    enum Action: Codable, Sendable {          // {"type":"score","team":"home","points":3}, {"type":"reset"}
        case score(team: String, points: Int)
        case reset
    }
    struct State: Codable, Sendable {
        var home = 0
        var away = 0
    }
    let initialState = State()

    // Mutation defaults to Action, and mutate(action:) passes the action through; override
    // mutate to return .run { emit in … } for async work, .delay, .cancellable(id:), …
    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .score(let team, let points): if team == "home" { state.home += points } else { state.away += points }
        case .reset: state = State()
        }
        return state
    }
}

// In your executable (a package that depends on this one, products Reactors and SessionService):
var catalog = ReactorCatalog()
catalog.register("scoreboard", summary: "Points per team.", exampleActions: [#"{"type":"reset"}"#]) {
    ScoreboardReactor()
}
var configuration = ServerConfiguration()
configuration.http.port = 8080
exit(ReactorServerCommand.serve(catalog: catalog, configuration: configuration))
// As reactor-server does: JSON log lines and the start summary (URL, admin token, data folder) on standard error,
// SIGTERM/SIGINT drain and stop, a port in use or a bad setting one clear line and exit status 1 or 2.
