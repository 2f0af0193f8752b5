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

/// A reducer that says when it has started (`entered`) and then waits until the test lets it go (`hold`).
private struct GatedReducer: Reactor {
    enum Action: Codable, Sendable { case add(Int) }
    struct State: Codable, Sendable { var values: [Int] = [] }
    let initialState = State()
    let entered: DispatchSemaphore
    let hold: DispatchSemaphore
    let scheduler: ReactorScheduler

    func reduce(state: State, mutation: Action) -> State {
        entered.signal()
        _ = hold.wait(timeout: .now() + 60)
        var state = state
        if case .add(let value) = mutation { state.values.append(value) }
        return state
    }
}

@Suite struct QueueLimitTests {
    /// While the reactor is busy, `queueLimit` actions may wait; the next one throws `.busy` and takes no seq,
    /// on either scheduler (inline, another thread is the one reducing). Once the reactor catches up, actions are
    /// taken again with the next seq, and the refused one never reached `reduce`.
    @Test(arguments: [ReactorScheduler.workers, .inline])
    func aBusyReactorRefusesActionsBeyondItsQueueLimit(scheduler: ReactorScheduler) async throws {
        let entered = DispatchSemaphore(value: 0)
        let hold = DispatchSemaphore(value: 0)
        let runtime = ReactorRuntime(GatedReducer(entered: entered, hold: hold, scheduler: scheduler), queueLimit: 3)
        if scheduler == .workers {
            #expect(try runtime.send(.add(1)) == 1)
        } else {
            // Inline, the sender reduces: a thread of its own sends the first action and is held in `reduce`.
            DispatchQueue.global().async { _ = try? runtime.send(.add(1)) }
        }
        #expect(entered.wait(timeout: .now() + 60) == .success, "the first action is being reduced")
        for value in 2...4 { #expect(try runtime.send(.add(value)) == UInt64(value)) }
        #expect(throws: ReactorError.busy(limit: 3)) { try runtime.send(.add(99)) }
        #expect(runtime.currentVersion == 0, "nothing reduced yet")
        for _ in 1...4 { hold.signal() }
        let snapshots = Recorder<Snapshot<GatedReducer.State>>()
        let token = runtime.observe { event in
            if case .state(let snapshot, _) = event { snapshots.record(snapshot) }
        }
        _ = try await snapshots.waitUntil("version 4") { $0.last?.version == 4 }
        hold.signal()
        let last = Recorder<Snapshot<GatedReducer.State>>()
        let seq = try runtime.send(.add(5)) { result in
            if case .success(let snapshot) = result { last.record(snapshot) }
        }
        #expect(seq == 5, "the refused action took no seq")
        let snapshot = try #require(try await last.waitForCount(1).first)
        token.cancel()
        #expect(snapshot.version == 5)
        #expect(snapshot.state.values == [1, 2, 3, 4, 5], "the refused action was never reduced")
    }

    /// Without a limit (the default) a busy reactor takes every action.
    @Test func withoutALimitEveryActionWaits() async throws {
        let entered = DispatchSemaphore(value: 0)
        let hold = DispatchSemaphore(value: 0)
        let runtime = ReactorRuntime(GatedReducer(entered: entered, hold: hold, scheduler: .workers))
        let last = Recorder<Snapshot<GatedReducer.State>>()
        for value in 1...2_000 {
            let seq = try runtime.send(.add(value)) { result in
                if value == 2_000, case .success(let snapshot) = result { last.record(snapshot) }
            }
            #expect(seq == UInt64(value))
        }
        for _ in 1...2_000 { hold.signal() }
        #expect(try await last.waitForCount(1).first?.version == 2_000)
    }
}

/// A reactor that notes the scheduling policy of the thread each `reduce` runs on.
private struct PolicyReporter: Reactor {
    enum Action: Codable, Sendable { case note }
    struct State: Codable, Sendable { var policies: [Int32] = [] }
    let initialState = State()
    let scheduler: ReactorScheduler

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        state.policies.append(sched_getscheduler(0))
        return state
    }
}

@Suite struct WorkerPriorityTests {
    /// The worker pool yields to ordinary threads (`SCHED_IDLE`, 5): a loop that wakes takes the CPU from a reduce
    /// at once. Inline reduces keep the sender's policy (`SCHED_OTHER`, 0).
    @Test func workersReduceUnderSchedIdleAndInlineUnderTheSendersPolicy() async throws {
        let workers = ReactorRuntime(PolicyReporter(scheduler: .workers))
        let reduced = Recorder<Snapshot<PolicyReporter.State>>()
        _ = try workers.send(.note) { result in
            if case .success(let snapshot) = result { reduced.record(snapshot) }
        }
        #expect(try await reduced.waitForCount(1).first?.state.policies == [5])
        let inline = ReactorRuntime(PolicyReporter(scheduler: .inline))
        _ = try inline.send(.note)
        #expect(inline.currentState.policies == [sched_getscheduler(0)])
        #expect(sched_getscheduler(0) != 5, "the test's own thread is an ordinary one")
    }
}
