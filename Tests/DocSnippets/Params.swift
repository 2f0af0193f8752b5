// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// HostingReactors.md's session parameters and context example, in a function so that `catalog` is the caller's;
// ReactorContextTests runs its twin through a live server.
import Reactors
import SessionService

func registerTally(_ catalog: inout ReactorCatalog) {
    struct TallyReactor: Reactor {
        // POST /sessions {"reactor":"tally","params":{"label":"desk"}}
        struct Params: Codable, Sendable { var label: String }
        enum Action: Codable, Sendable { case check, bump, record(seen: Int) }
        struct State: Codable, Sendable { var label: String; var count = 0; var seen: Int? }

        let context: ReactorContext<TallyReactor, Params>
        var initialState: State { State(label: context.params.label) }

        func mutate(action: Action) -> Effect<Action> {
            guard case .check = action else { return .just(action) }
            return .run { [context] _ in
                try await context.clock.sleep(for: .seconds(1))
                let count = context.currentState.count          // the state now, not when `check` arrived
                context.logger.info("checked", ["count": "\(count)"])   // logged with "session": its id
                try await context.send(.record(seen: count))    // queued, journaled, logged "from": "effect"
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

    catalog.register("tally", params: TallyReactor.Params.self) { context in TallyReactor(context: context) }
}
