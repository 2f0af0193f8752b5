// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// HostingReactors.md's scheduler example.
import Reactors

struct ReportReactor: Reactor {
    enum Action: Codable, Sendable { case add(Double) }
    struct State: Codable, Sendable {
        var values: [Double] = []
        var median = 0.0
    }
    let initialState = State()
    var scheduler: ReactorScheduler { .workers }   // reduce sorts every value: milliseconds for a large report

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        if case .add(let value) = mutation { state.values.append(value) }
        state.median = state.values.sorted()[state.values.count / 2]
        return state
    }
}
