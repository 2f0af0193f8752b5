import Reactors
import ReactorsTesting
import Testing

/// A reactor whose `check` effect waits, reads the state then, and sends its own runtime what it saw.
private struct Watcher: Reactor {
    enum Action: Codable, Sendable, Equatable { case check, bump, saw(Int) }
    struct State: Codable, Sendable, Equatable {
        var count = 0
        var saw: Int?
    }

    let context: ReactorContext<Watcher, Int>
    var initialState: State { State(count: context.params) }

    func mutate(action: Action) -> Effect<Action> {
        guard case .check = action else { return .just(action) }
        return .run { [context] _ in
            try await context.clock.sleep(for: .seconds(1))
            try await context.send(.saw(context.currentState.count))
        }
    }

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .check: break
        case .bump: state.count += 1
        case .saw(let count): state.saw = count
        }
        return state
    }
}

/// `ReactorContext` on a plain runtime (a `ReactorTester`'s): params reach the reactor, an effect reads the
/// state as it is after its wait, and what it sends is queued as a new action.
@Suite struct ContextRuntimeTests {
    @Test func anEffectSeesTheStateNowAndSendsAnAction() async {
        let clock = TestClock()
        let context = ReactorContext<Watcher, Int>(sessionID: "w", params: 10, clock: clock, logger: .discarding)
        let tester = ReactorTester(Watcher(context: context), clock: clock)
        context.attach(to: tester.runtime)
        #expect(tester.state.count == 10)
        await tester.send(.check)
        await tester.send(.bump) { $0.count = 11 }
        await tester.send(.bump) { $0.count = 12 }
        await tester.receive(.saw(12), timeout: .seconds(1)) { $0.saw = 12 }
        #expect(tester.runtime.currentSnapshot.version == 3)
        await tester.finish()
    }

    @Test func sendingBeforeTheContextIsAttachedThrows() async {
        let context = ReactorContext<Watcher, Int>(sessionID: "w", params: 0, logger: .discarding)
        await #expect(throws: ReactorContextError.notAttached(sessionID: "w")) { try await context.send(.bump) }
    }
}
