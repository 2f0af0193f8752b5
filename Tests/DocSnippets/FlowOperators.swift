// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// HostingReactors.md's Flow operators example, in a reactor of its own.
import Reactors

struct SearchBoxReactor: Reactor {
    enum Action: Codable, Sendable, Equatable { case query(String) }
    struct State: Codable, Sendable { var query = "" }
    let initialState = State()
    let clock = ContinuousClock()

    func transform(action: Flow<Action>) -> Flow<Action> {
        action.debounce(for: .milliseconds(300), clock: clock).removeDuplicates().flatMapLatest().debug("action")
    }

    func reduce(state: State, mutation: Action) -> State {
        guard case .query(let text) = mutation else { return state }
        return State(query: text)
    }
}
