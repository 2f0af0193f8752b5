import ReactorServerTesting
import Reactors
import ReactorsTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Records every call a runtime announces, with the calls then open on the same thread.
final class RecordingTracer: ReactorCallTracer {
    struct Call: Equatable, Sendable, CustomStringConvertible {
        var call: ReactorCall
        var seq: UInt64
        var version: UInt64
        /// The calls open on the announcing thread, outermost first.
        var enclosing: [ReactorCall] = []

        var description: String { "\(call)(seq \(seq), version \(version)) in \(enclosing)" }
    }

    private let state = Mutex<(calls: [Call], open: [UInt: [ReactorCall]])>(([], [:]))

    func willRun(_ call: ReactorCall, seq: UInt64, version: UInt64) {
        let thread = UInt(pthread_self())
        state.withLock { state in
            state.calls.append(Call(call: call, seq: seq, version: version, enclosing: state.open[thread] ?? []))
            state.open[thread, default: []].append(call)
        }
    }

    func didRun() {
        let thread = UInt(pthread_self())
        state.withLock { state in
            // A didRun without its willRun on this thread would be a runtime bug: it shows as a leftover.
            if state.open[thread]?.popLast() == nil { state.open[thread] = [.source, .source] }
            if state.open[thread]?.isEmpty == true { state.open[thread] = nil }
        }
    }

    var calls: [Call] { state.withLock { $0.calls } }
    /// Calls announced and not ended, by thread: none once the runtime is idle.
    var open: [UInt: [ReactorCall]] { state.withLock { $0.open } }
}

/// Emits its mutation from an effect task, once `gate` opens (nil: after a suspension).
struct EffectEmittingReactor: Reactor {
    enum Action: Codable, Sendable { case later }
    enum Mutation: Codable, Sendable { case add }
    struct State: Codable, Sendable, Equatable { var value = 0 }
    let initialState = State()
    var gate: Gate?

    func mutate(action: Action) -> Effect<Mutation> {
        .run { [gate] emit in
            if let gate { try await gate.wait("the test to let the effect emit") } else { await Task.yield() }
            await emit(.add)
        }
    }

    func reduce(state: State, mutation: Mutation) -> State { State(value: state.value + 1) }
}

/// The hook a host uses to pin a crash on a session: the runtime announces every call of the reactor's
/// own code, with the action's seq or the version made, on the thread that runs it.
@Suite struct CallTracerTests {
    @Test func everyCallOfTheReactorIsAnnouncedWithItsSeqAndVersion() throws {
        let tracer = RecordingTracer()
        let runtime = ReactorRuntime(CountingReactor(), tracer: tracer)
        #expect(tracer.calls.map(\.call) == [.transformState, .transformAction, .transformMutation])
        try runtime.send(.increase)
        try runtime.send(.increaseTwice)
        let afterStart = Array(tracer.calls.dropFirst(3))
        #expect(
            afterStart == [
                .init(call: .mutate, seq: 1, version: 0), .init(call: .reduce, seq: 1, version: 1),
                .init(call: .transformState, seq: 1, version: 1),
                .init(call: .mutate, seq: 2, version: 1), .init(call: .reduce, seq: 2, version: 2),
                .init(call: .transformState, seq: 2, version: 2),
                .init(call: .reduce, seq: 2, version: 3), .init(call: .transformState, seq: 2, version: 3),
            ])
        #expect(tracer.open.isEmpty, "calls left open: \(tracer.open)")
    }

    @Test func anEffectsCodeIsAnnouncedOnTheThreadThatRunsItAroundTheReduceItCauses() async throws {
        let tracer = RecordingTracer()
        let gate = Gate()
        let runtime = ReactorRuntime(EffectEmittingReactor(gate: gate), tracer: tracer)
        try runtime.send(.later)
        // The send's drain is over (it returned): the effect's emit finds the runtime idle and reduces on its thread.
        gate.open()
        await runtime.waitForEffectTasks()
        #expect(runtime.currentVersion == 1)
        let calls = tracer.calls
        #expect(calls.contains(.init(call: .effect, seq: 1, version: 0)), "\(calls)")
        // The effect's emit reduced on its own thread (the runtime was idle), inside the effect's call.
        #expect(calls.contains(.init(call: .reduce, seq: 1, version: 1, enclosing: [.effect])), "\(calls)")
        #expect(tracer.open.isEmpty, "calls left open: \(tracer.open)")
    }

    @Test func whatTheTracerKeepsAsAnEffectStartsComesBackWithEachStretchOfIt() async throws {
        let tracer = ContextTracer()
        let runtime = ReactorRuntime(EffectEmittingReactor(), tracer: tracer)
        try runtime.send(.later)
        try runtime.send(.later)
        await runtime.waitForEffectTasks()
        // Kept on the thread that ran mutate, handed back on the pool's threads, per effect.
        #expect(tracer.kept == [1, 2])
        #expect(Set(tracer.handedBack) == [1, 2])
    }
}

/// A timed Flow operator holds an element in a task of its own and lets it go on later: that task runs the
/// rest of the chain and, when the runtime is idle, the `mutate` and `reduce` it leads to. All of it is
/// announced, on the hold task's thread, under the action's seq.
@Suite(.offThePool) struct FlowCallTracerTests {
    @Test func aDebouncedActionIsAnnouncedOnItsHoldTaskAroundTheMutateAndReduceItLeadsTo() async throws {
        let clock = TestClock()
        let tracer = RecordingTracer()
        let reactor = FlowReactor(
            clock: clock,
            actions: { flow, clock in
                flow.debounce(for: .milliseconds(300), clock: clock)
            })
        let runtime = ReactorRuntime(reactor, tracer: tracer)
        try runtime.send(.type("s"))
        await clock.waitForSleepers()
        // On the sending thread: the chain, which holds the action; its mutate has not run.
        #expect(tracer.calls.contains(.init(call: .transformAction, seq: 1, version: 0)), "\(tracer.calls)")
        #expect(!tracer.calls.contains { $0.call == .mutate }, "\(tracer.calls)")
        #expect(tracer.open.isEmpty, "calls left open: \(tracer.open)")

        await clock.advance(by: .milliseconds(300))
        try await eventually("the held action to be reduced") { runtime.currentVersion == 1 }
        await runtime.waitForEffectTasks()
        let calls = tracer.calls
        // The hold task's stretch is the action's transform; what it released ran inside it.
        #expect(calls.contains(.init(call: .mutate, seq: 1, version: 0, enclosing: [.transformAction])), "\(calls)")
        #expect(calls.contains(.init(call: .reduce, seq: 1, version: 1, enclosing: [.transformAction])), "\(calls)")
        #expect(tracer.open.isEmpty, "calls left open: \(tracer.open)")
        runtime.stop()
    }

    @Test func aDebouncedMutationIsAnnouncedOnItsHoldTaskAroundTheReduceItLeadsTo() async throws {
        let clock = TestClock()
        let tracer = RecordingTracer()
        let reactor = FlowReactor(
            clock: clock,
            mutations: { flow, clock in
                flow.debounce(for: .milliseconds(300), clock: clock)
            })
        let runtime = ReactorRuntime(reactor, tracer: tracer)
        try runtime.send(.type("a"))
        await clock.waitForSleepers()
        #expect(tracer.calls.contains(.init(call: .mutate, seq: 1, version: 0)), "\(tracer.calls)")
        // The mutation chain ran (and held the mutation) under the action's seq.
        #expect(tracer.calls.contains(.init(call: .transformMutation, seq: 1, version: 0)), "\(tracer.calls)")
        #expect(!tracer.calls.contains { $0.call == .reduce }, "\(tracer.calls)")

        await clock.advance(by: .milliseconds(300))
        try await eventually("the held mutation to be reduced") { runtime.currentVersion == 1 }
        await runtime.waitForEffectTasks()
        let calls = tracer.calls
        #expect(
            calls.contains(.init(call: .reduce, seq: 1, version: 1, enclosing: [.transformMutation])), "\(calls)")
        #expect(tracer.open.isEmpty, "calls left open: \(tracer.open)")
        runtime.stop()
    }

    @Test func whatTheTracerKeepsForAHeldActionComesBackOnItsHoldTask() async throws {
        let clock = TestClock()
        let tracer = ContextTracer()
        let reactor = FlowReactor(
            clock: clock,
            actions: { flow, clock in
                flow.throttle(for: .milliseconds(300), clock: clock)
            })
        let runtime = ReactorRuntime(reactor, tracer: tracer)
        // The first passes and opens a window; the second is held for the window's end.
        try runtime.send(.type("a"))
        try runtime.send(.type("b"))
        await clock.waitForSleepers()
        #expect(tracer.kept == [2])
        await clock.advance(by: .milliseconds(300))
        try await eventually("the held action to be reduced") { runtime.currentVersion == 2 }
        await runtime.waitForEffectTasks()
        #expect(Set(tracer.handedBack) == [2])
        runtime.stop()
    }
}

/// Keeps each effect's seq as its context and notes which contexts come back.
final class ContextTracer: ReactorCallTracer {
    final class Tag: Sendable {
        let seq: UInt64
        init(_ seq: UInt64) { self.seq = seq }
    }

    private let state = Mutex<(kept: [UInt64], handedBack: [UInt64])>(([], []))

    func willRun(_ call: ReactorCall, seq: UInt64, version: UInt64) {}
    func didRun() {}

    func context(forEffectOf seq: UInt64) -> (any AnyObject & Sendable)? {
        state.withLock { $0.kept.append(seq) }
        return Tag(seq)
    }

    func willRun(_ call: ReactorCall, seq: UInt64, context: (any AnyObject & Sendable)?) {
        guard let tag = context as? Tag, tag.seq == seq else { return }
        state.withLock { $0.handedBack.append(seq) }
    }

    var kept: [UInt64] { state.withLock { $0.kept } }
    var handedBack: [UInt64] { state.withLock { $0.handedBack } }
}
