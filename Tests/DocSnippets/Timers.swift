// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// HostingReactors.md's durable timers example.
import Reactors

struct CartReactor: Reactor {
    enum Action: Codable, Sendable {
        case add(item: String)   // {"type":"add","item":"tea"}: the cart expires 30 minutes after its last change
        case checkOut
        case expire              // sent only by the cart's timer
    }
    struct State: Codable, Sendable {
        var items: [String] = []
        var expired = false
    }
    enum Mutation: Codable, Sendable { case add(String), empty(expired: Bool) }
    let initialState = State()

    static func acceptsFromOutside(_ action: Action) -> Bool {
        if case .expire = action { return false }   // a client sending it gets 422 unknown_action
        return true
    }

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .add(let item):   // scheduling "expiry" again replaces its timer
            return .concat(.just(.add(item)), .schedule("expiry", after: .seconds(30 * 60), Action.expire))
        case .checkOut:
            return .concat(.just(.empty(expired: false)), .cancelTimer("expiry"))
        case .expire:
            return .just(.empty(expired: true))
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .add(let item):
            state.items.append(item)
            state.expired = false
        case .empty(let expired):
            state.items = []
            state.expired = expired
        }
        return state
    }
}
