import Examples
import Foundation
import Reactors
import SessionService

#if canImport(Glibc)
import Glibc
#endif

// reactor-server-traps: the server's own command line hosting reactors that crash on purpose, for the
// crash-quarantine tests (a test-only executable, built with the tests; never shipped).

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
        catalog.register("trap", summary: "Crashes on purpose.") { TrapReactor(trapAt: trapAt) }
        catalog.register(CounterReactor.name, summary: CounterReactor.summary) { CounterReactor() }
        return catalog
    })
