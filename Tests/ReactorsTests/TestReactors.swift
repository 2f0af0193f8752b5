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

extension ReactorRuntime {
    /// Sends `action` and returns once everything it started has been reduced.
    func sendAndWait(_ action: R.Action) async throws -> Snapshot<R.State> {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Snapshot<R.State>, ReactorError>, Never>) in
            do throws(ReactorError) {
                try send(action) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}

/// A one-shot signal an effect can wait on, so tests decide when it continues.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

struct TestFailure: Error, Equatable {
    var reason: String
}

/// A reactor whose actions describe their effect, to exercise every `Effect` shape.
struct ScriptReactor: Reactor {
    enum Action: Sendable {
        case effect(@Sendable (ReactorRuntimeBox) -> Effect<Mutation>)
        case set(Int)
    }

    enum Mutation: Codable, Sendable, Equatable { case append(Int) }
    struct State: Codable, Sendable, Equatable { var values: [Int] = [] }

    let initialState = State()
    let box: ReactorRuntimeBox

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .effect(let make): make(box)
        case .set(let value): .just(.append(value))
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        if case .append(let value) = mutation { state.values.append(value) }
        return state
    }
}

extension ScriptReactor.Action: Decodable {
    init(from decoder: any Decoder) throws { self = .set(try Int(from: decoder)) }
}

/// Lets a `ScriptReactor`'s effects reach their own runtime (to read `currentState` or send).
final class ReactorRuntimeBox: Sendable {
    private let storage = Mutex<ReactorRuntime<ScriptReactor>?>(nil)
    var runtime: ReactorRuntime<ScriptReactor> { storage.withLock { $0! } }
    func set(_ runtime: ReactorRuntime<ScriptReactor>) { storage.withLock { $0 = runtime } }

    static func make() -> ReactorRuntime<ScriptReactor> {
        let box = ReactorRuntimeBox()
        let runtime = ReactorRuntime(ScriptReactor(box: box))
        box.set(runtime)
        return runtime
    }
}

extension ReactorRuntimeBox {
    /// A `ScriptReactor` whose box is never filled, for effects that do not need their runtime.
    static func makeReactor() -> ScriptReactor { ScriptReactor(box: ReactorRuntimeBox()) }
}
