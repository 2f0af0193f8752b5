import ReactorServerTesting
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

/// What a recorder of observer events reads: the states among them, and whether the runtime finished.
protocol ObservedEvent: Sendable {
    associatedtype State: Sendable
    var snapshot: Snapshot<State>? { get }
    var isFinish: Bool { get }
}

extension StateEvent: ObservedEvent {
    var snapshot: Snapshot<State>? { if case .state(let snapshot, _) = self { snapshot } else { nil } }
    var isFinish: Bool { if case .finished = self { true } else { false } }
}

/// Records what an observer receives: `runtime.observe(recorder.record)`.
typealias StateRecorder<State: Sendable> = Recorder<StateEvent<State>>

extension Recorder where Value: ObservedEvent {
    /// The states recorded, in order.
    var snapshots: [Snapshot<Value.State>] { values.compactMap(\.snapshot) }
    /// Whether the last event recorded is `.finished`.
    var isFinished: Bool { values.last?.isFinish ?? false }
}

extension ReactorRuntime {
    /// Returns once no effect runs (`waitForEffects()`), failing after the default bound.
    func settle() async throws {
        try await waitFor("every effect of the runtime to finish") { await self.waitForEffects() }
    }

    /// Sends `action` and returns once everything it started has been reduced.
    func sendAndWait(_ action: R.Action) async throws -> Snapshot<R.State> {
        let result = try await waitFor("everything the action started to be reduced") {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<Snapshot<R.State>, ReactorError>, Never>) in
                do throws(ReactorError) {
                    try self.send(action) { continuation.resume(returning: $0) }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
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
