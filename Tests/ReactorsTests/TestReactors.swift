import Reactors
import Synchronization

/// A counter whose hooks record that they ran, in order (ReactorKit's `TestReactor`).
struct CountingReactor: Reactor {
    enum Action: Codable, Sendable, Equatable { case increase, decrease, increaseTwice }
    enum Mutation: Codable, Sendable, Equatable { case add(Int) }
    struct State: Codable, Sendable, Equatable { var value = 0 }

    let initialState = State()
    let log: EventLog

    init(log: EventLog = EventLog()) { self.log = log }

    func mutate(action: Action) -> Effect<Mutation> {
        log.append("mutate")
        switch action {
        case .increase: return .just(.add(1))
        case .decrease: return .just(.add(-1))
        case .increaseTwice: return .concat([.just(.add(1)), .just(.add(1))])
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        log.append("reduce")
        guard case .add(let amount) = mutation else { return state }
        return State(value: state.value + amount)
    }

    func transform(action: Flow<Action>) -> Flow<Action> {
        log.append("transformAction")
        return action
    }

    func transform(mutation: Flow<Mutation>) -> Flow<Mutation> {
        log.append("transformMutation")
        return mutation
    }

    func transform(state: State) -> State {
        log.append("transformState")
        return state
    }
}

/// A thread-safe list of strings for hooks and observers to write to.
final class EventLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
    func removeAll() { entries.withLock { $0 = [] } }
}

/// Collects what an observer receives, and lets a test wait for a number of events.
final class Recorder<State: Sendable>: Sendable {
    private struct Storage {
        var events: [StateEvent<State>] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let storage = Mutex(Storage())

    func record(_ event: StateEvent<State>) {
        let ready = storage.withLock { storage in
            storage.events.append(event)
            let count = storage.events.count
            let ready = storage.waiters.filter { $0.count <= count }.map(\.continuation)
            storage.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var events: [StateEvent<State>] { storage.withLock { $0.events } }

    var snapshots: [Snapshot<State>] {
        events.compactMap { if case .state(let snapshot, _) = $0 { snapshot } else { nil } }
    }

    var isFinished: Bool {
        if case .finished = events.last { true } else { false }
    }

    /// Returns once `count` events have arrived (a generous real-time bound only fails the test).
    func waitFor(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = storage.withLock { storage in
                if storage.events.count >= count { return true }
                storage.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
