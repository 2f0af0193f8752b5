// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// NewVersions.md's worked example of a storage version 2, compiled as shown.
import Reactors

struct ScoreboardV2: Reactor {
    enum Action: Codable, Sendable { case score(points: Int), rename(name: String) }   // the wire: unchanged
    enum Mutation: Codable, Sendable { case addPoints(Int), setName(String) }        // stored: its own
    struct State: Codable, Sendable {
        struct Points: Codable, Sendable { var value = 0 }
        var home = Points()
        var name = "home"
        var label = "home: 0"
    }
    static var storageVersion: Int { 2 }
    let initialState = State()

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .score(let points): .just(.addPoints(points))
        case .rename(let name): .just(.setName(name))
        }
    }
    func reduce(state: State, mutation: Mutation) -> State { /* … */ state }

    // What version 1 stored: its State and its mutations (then the actions themselves).
    struct StateV1: Decodable { var home: Int; var name: String }
    enum MutationV1: Decodable { case score(points: Int), rename(name: String) }

    func migrate(state decoder: any Decoder, from version: Int) throws -> State? {
        let old = try StateV1(from: decoder)
        return State(home: .init(value: old.home), name: old.name, label: "\(old.name): \(old.home)")
    }
    func migrate(mutation decoder: any Decoder, from version: Int) throws -> [Mutation]? {
        switch try MutationV1(from: decoder) {
        case .score(let points): [.addPoints(points)]
        case .rename(let name): [.setName(name)]
        }
    }
}
