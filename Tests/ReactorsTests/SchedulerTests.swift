import Dispatch
import ReactorServerTesting
import Reactors
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A reactor whose `reduce` waits until the test lets it go, and notes the thread it ran on.
private struct HeldReducer: Reactor {
    enum Action: Codable, Sendable { case add(Int) }
    struct State: Codable, Sendable {
        var values: [Int] = []
        var threads: [UInt] = []
    }
    let initialState = State()
    let hold: DispatchSemaphore
    let scheduler: ReactorScheduler
    /// Effects emit further mutations, which must run on the workers too.
    var echo = false

    func mutate(action: Action) -> Effect<Action> {
        guard echo, case .add(let value) = action else { return .just(action) }
        return .concat([.just(action), .run { emit in try await emit(.add(-value)) }])
    }

    func reduce(state: State, mutation: Action) -> State {
        _ = hold.wait(timeout: .now() + 60)
        var state = state
        if case .add(let value) = mutation { state.values.append(value) }
        state.threads.append(UInt(bitPattern: Int(bitPattern: pthread_self())))
        return state
    }
}

@Suite struct SchedulerTests {
    /// `.workers`: `send` returns while `reduce` is still held (inline it would run `reduce` on this thread and
    /// wait), every action is reduced in order, one version each, on threads other than the sender's.
    @Test func aWorkersReactorNeverReducesOnTheSendersThreadAndKeepsTheOrder() async throws {
        let hold = DispatchSemaphore(value: 0)
        let runtime = ReactorRuntime(HeldReducer(hold: hold, scheduler: .workers))
        let sender = UInt(bitPattern: Int(bitPattern: pthread_self()))
        let last = Recorder<Snapshot<HeldReducer.State>>()
        for value in 1...50 {
            let seq = try runtime.send(.add(value)) { result in
                if value == 50, case .success(let snapshot) = result { last.record(snapshot) }
            }
            #expect(seq == UInt64(value))
        }
        #expect(runtime.currentVersion == 0, "nothing is reduced while reduce is held")
        for _ in 1...50 { hold.signal() }
        let snapshot = try #require(try await last.waitForCount(1).first)
        #expect(snapshot.version == 50)
        #expect(snapshot.state.values == Array(1...50))
        #expect(!snapshot.state.threads.contains(sender))
    }

    /// The default is inline: the sender's thread reduces before `send` returns.
    @Test func anInlineReactorReducesOnTheSendersThreadBeforeSendReturns() throws {
        let hold = DispatchSemaphore(value: 0)  // (libdispatch traps on freeing one below its initial value)
        hold.signal()
        let runtime = ReactorRuntime(HeldReducer(hold: hold, scheduler: .inline))
        _ = try runtime.send(.add(1))
        #expect(runtime.currentVersion == 1)
        #expect(runtime.currentState.threads == [UInt(bitPattern: Int(bitPattern: pthread_self()))])
    }

    /// An effect's mutations go through the same queue: the state is the ordered fold of the action's mutation and
    /// its effect's, versions one by one, never reduced on an effect's thread concurrently with another reduce.
    @Test func effectMutationsOfAWorkersReactorAreReducedInTurn() async throws {
        let hold = DispatchSemaphore(value: 0)
        for _ in 1...40 { hold.signal() }
        let runtime = ReactorRuntime(HeldReducer(hold: hold, scheduler: .workers, echo: true))
        let snapshots = Recorder<Snapshot<HeldReducer.State>>()
        let token = runtime.observe { event in
            if case .state(let snapshot, _) = event { snapshots.record(snapshot) }
        }
        for value in 1...20 { _ = try runtime.send(.add(value)) }
        let all = try await snapshots.waitUntil("40 versions") { $0.last?.version == 40 }
        token.cancel()
        let versions = all.map(\.version)
        #expect(versions == Array(0...40).map(UInt64.init), "every version once, in order")
        let final = try #require(all.last).state.values
        #expect(final.filter { $0 > 0 } == Array(1...20), "actions in the order sent")
        #expect(final.reduce(0, +) == 0, "each action's effect reduced too")
    }
}
