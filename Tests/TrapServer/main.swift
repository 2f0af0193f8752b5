import Foundation
import HostedExamples
import Reactors
import SessionService

#if canImport(Glibc)
    import Glibc
#endif

// reactor-server-traps: the server's own command line hosting reactors that misbehave on purpose: they crash, for
// the crash-quarantine tests, or reduce slowly, for .ci/bench-heavy-reduce (a test-only executable, built with the
// tests; never shipped).

/// Traps where the tests ask: in `reduce` when the value reaches `TRAP_AT` (default 3; an index out of
/// range, as in the issue), in `mutate`, in an effect on the cooperative pool, in `transform(state:)`;
/// and reduces slowly on request, for `kill -9` in the middle of one.
struct TrapReactor: Reactor {
    enum Action: Codable, Sendable {
        case add(amount: Int)
        case mutateTrap
        case effectTrap
        case hide
        case slow(seconds: Int)
    }

    enum Mutation: Codable, Sendable {
        case add(Int)
        case hide
        case slow(Int)
    }

    struct State: Codable, Sendable {
        var value = 0
        var hidden = false
    }

    let initialState = State()
    /// The value whose reduce traps (read from `TRAP_AT` when the server starts).
    let trapAt: Int
    /// `trap-workers` runs on the worker pool, so its traps happen off the thread that sent the action.
    var scheduler: ReactorScheduler = .inline

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .add(let amount): return .just(.add(amount))
        case .mutateTrap:
            let missing: Int? = nil
            return .just(.add(missing!))
        case .effectTrap:
            return .run { emit in
                await Task.yield()
                let empty: [Int] = []
                await emit(.add(empty[0]))
            }
        case .hide: return .just(.hide)
        case .slow(let seconds): return .just(.slow(seconds))
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .add(let amount):
            state.value += amount
            // The bug: a table one entry short of the value it meets.
            if state.value == trapAt { _ = Array(0..<trapAt)[state.value] }
        case .hide:
            state.hidden = true
        case .slow(let seconds):
            writeLine("trap reactor: a slow reduce started")
            sleep(UInt32(seconds))
            state.value += 1
        }
        return state
    }

    func transform(state: State) -> State {
        precondition(!state.hidden, "transform(state:) meets a hidden state")
        return state
    }

    private func writeLine(_ text: String) {
        var line = text + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}

/// Traps on the paths main's Flow operators and recovery added, on the task that held a debounced search once it
/// lets it go: in the `map` after the debounce on a search for "late", in `reduce` on a search for "trap"; in
/// `recover(interrupted:state:)` at load when `RECOVER_TRAPS` is set
/// (the action `hang` starts an effect that never ends, so a `kill -9` leaves it interrupted), and in its own
/// middleware's `intercept` on a search for "intercepted".
struct FlowTrapReactor: Reactor {
    enum Action: Codable, Sendable {
        case search(query: String)
        case hang
    }

    enum Mutation: Codable, Sendable {
        case query(String)
        case recovered
    }

    struct State: Codable, Sendable {
        var query = ""
        var recovered = false
    }

    let initialState = State()
    /// Whether `recover(interrupted:state:)` traps (read from `RECOVER_TRAPS` when the server starts).
    let recoverTraps: Bool

    func mutate(action: Action) -> Effect<Mutation> {
        switch action {
        case .search(let query): return .just(.query(query))
        case .hang: return .run { _ in try await Task.sleep(for: .seconds(86_400)) }
        }
    }

    func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .query(let query):
            let found: [String: Int] = [:]
            if query == "trap" { _ = found[query]! }
            state.query = query
        case .recovered:
            state.recovered = true
        }
        return state
    }

    /// Typing: only the last of a quick burst runs (ReactorKit's search example), then a stage of the author's.
    func transform(action: Flow<Action>) -> Flow<Action> {
        action.debounce(for: .milliseconds(20)).map { action in
            if case .search(let query) = action { precondition(query != "late", "the map meets a late search") }
            return action
        }
    }

    func recover(interrupted action: Action, state: State) -> [Mutation] {
        guard case .hang = action else { return [] }
        precondition(!recoverTraps, "recover(interrupted:state:) meets a hanging action")
        return [.recovered]
    }
}

/// The flow trap's own middleware: its `intercept` traps on a search for "intercepted".
struct FlowTrapGuard: ReactorMiddleware {
    typealias R = FlowTrapReactor

    func intercept(action: FlowTrapReactor.Action, state: FlowTrapReactor.State) throws(ActionRejection) {
        if case .search(let query) = action, query == "intercepted" { fatalError("the guard meets \(query)") }
    }
}

/// A reducer that spends `HEAVY_MS` (default 20) milliseconds of CPU on every `reduce`, as ReactorKit's README's
/// `heavyAndImportantCalculation()`, on the scheduler it is registered with (`heavy-inline`, `heavy-workers`).
struct HeavyReactor: Reactor {
    enum Action: Codable, Sendable { case work }
    struct State: Codable, Sendable { var done = 0 }
    let initialState = State()
    let milliseconds: Int
    let scheduler: ReactorScheduler

    func reduce(state: State, mutation: Action) -> State {
        var start = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        while true {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            if (now.tv_sec - start.tv_sec) * 1_000_000_000 + (now.tv_nsec - start.tv_nsec) >= milliseconds * 1_000_000 {
                break
            }
        }
        return State(done: state.done + 1)
    }
}

let environment = ProcessInfo.processInfo.environment
let trapAt = environment["TRAP_AT"].flatMap(Int.init) ?? 3
// A bug in the server's own code, on a thread that runs no reactor: it traps once the file exists.
if let path = environment["TRAP_SERVER_WHEN"] {
    Thread.detachNewThread {
        while access(path, F_OK) != 0 { usleep(20_000) }
        let table: [Int] = []
        _ = table[0]
    }
}
exit(
    ReactorServerCommand.run(arguments: CommandLine.arguments, environment: environment) { _ in
        var catalog = ReactorCatalog()
        // The examples as reactor-server hosts them (the tests' bystander sessions are counters), then the traps.
        ExampleCatalog.register(in: &catalog)
        catalog.register("trap", summary: "Crashes on purpose.") { TrapReactor(trapAt: trapAt) }
        catalog.register("trap-workers", summary: "Crashes on purpose, on the worker pool.") {
            TrapReactor(trapAt: trapAt, scheduler: .workers)
        }
        let heavy = environment["HEAVY_MS"].flatMap(Int.init) ?? 20
        catalog.register("heavy-inline", summary: "Spends HEAVY_MS of CPU per reduce, inline.") {
            HeavyReactor(milliseconds: heavy, scheduler: .inline)
        }
        catalog.register("heavy-workers", summary: "Spends HEAVY_MS of CPU per reduce, on the worker pool.") {
            HeavyReactor(milliseconds: heavy, scheduler: .workers)
        }
        let recoverTraps = environment["RECOVER_TRAPS"] != nil
        catalog.register(
            "flowtrap", summary: "Crashes on purpose on Flow and recovery paths.",
            middlewares: { _ in
                [FlowTrapGuard()]
            }
        ) { FlowTrapReactor(recoverTraps: recoverTraps) }
        return catalog
    })
