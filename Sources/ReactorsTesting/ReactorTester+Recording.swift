import JSONCodec
import Reactors
import Synchronization

/// How strictly a `ReactorTester` holds a test to what the reactor did (TCA's `Exhaustivity`).
public enum Exhaustivity: Sendable, Equatable {
    /// Every state (with its pulses), every running effect and every scheduled action must be accounted for:
    /// a state not asserted before the next `send` or `finish`, or an effect still running at `finish`, fails.
    case on
    /// Assertions check only what they state: the fields an assertion sets (set them to values, not `+= 1`),
    /// `receive` skips states until one satisfies it, and `finish` cancels whatever still runs.
    case off
}

/// One state the runtime emitted, as the tester recorded it.
struct ReceivedState<R: Reactor>: Sendable {
    /// The version and the state as observers saw it.
    var snapshot: Snapshot<R.State>
    /// The `@Pulse` properties this state assigned, by name (as the runtime delivers them).
    var pulses: [String]
    /// The mutation that produced it; nil for a forced (stub) state.
    var mutation: R.Mutation?
    /// The test clock's time when it was emitted, when the tester has a clock.
    var time: TestClock.Instant?

    /// One line for failure messages: version, mutation, JSON, pulses, time.
    var summary: String {
        var text = "version \(snapshot.version)"
        if let mutation { text += " from \(mutation)" }
        if let time { text += " at \(time.offset)" }
        text += ": " + ((try? JSONValueEncoder().encodeValue(snapshot.state).serializedString()) ?? "\(snapshot.state)")
        if !pulses.isEmpty { text += " (pulses: \(pulses.joined(separator: ", ")))" }
        return text
    }
}

/// An action a test scheduled for a time on the test clock.
struct ScheduledAction<R: Reactor>: Sendable {
    var action: R.Action
    var time: TestClock.Instant
    /// Scheduling order, for actions due at the same instant.
    var order: UInt64
    /// The name of the reactor's timer (`Effect.schedule`) that sends it; nil for one the test scheduled.
    var timer: String? = nil
}

/// What the tester knows of its runtime, filled by its observer, its middleware and the test's own calls.
struct TesterBook<R: Reactor>: Sendable {
    /// States emitted and not yet taken by an assertion, oldest first.
    var pending: [ReceivedState<R>] = []
    /// Mutations the middleware saw, by the version they produced, until the observer pairs them with the state.
    var mutations: [UInt64: R.Mutation] = [:]
    /// The newest version recorded; the observer's first event repeats it.
    var lastVersion: UInt64
    /// The state the next assertion starts from: the last one taken (TCA's `store.state`).
    var state: R.State
    /// Sends whose synchronous part the runtime has not finished yet (see `Probe`).
    var unfinishedSends = 0
    /// Actions waiting for their time on the test clock, soonest first.
    var scheduled: [ScheduledAction<R>] = []
    var nextOrder: UInt64 = 0
    var exhaustivity: Exhaustivity
    /// True once the runtime told its observers it stopped.
    var isStopped = false
}

/// The state a tester shares with its runtime's observer and middleware (never the tester itself, so
/// dropping a tester frees it).
final class TesterRecording<R: Reactor>: Sendable {
    let book: Mutex<TesterBook<R>>
    let changes = Changes()
    let clock: TestClock?

    init(_ book: TesterBook<R>, clock: TestClock?) {
        self.book = Mutex(book)
        self.clock = clock
    }

    /// Keeps the reactor's timer effects as actions scheduled on the test clock: a name scheduled again replaces
    /// its timer, a cancelled one is dropped. Without a clock they never fall due (``ReactorTester/pendingTimers``).
    func timer(_ request: TimerRequest<R.Action>) {
        book.withLock { book in
            switch request {
            case .schedule(let name, let delay, let action):
                book.scheduled.removeAll { $0.timer == name }
                book.nextOrder += 1
                let now = clock?.now ?? TestClock.Instant(offset: .zero)
                book.scheduled.append(
                    ScheduledAction(action: action, time: now.advanced(by: delay), order: book.nextOrder, timer: name))
                book.scheduled.sort { ($0.time, $0.order) < ($1.time, $1.order) }
            case .cancel(let name):
                book.scheduled.removeAll { $0.timer == name }
            }
        }
        changes.bump()
    }

    /// Files a state the runtime emitted (the first event of an observation repeats the current one: ignored).
    func record(_ event: StateEvent<R.State>) {
        switch event {
        case .state(let snapshot, let pulses):
            let time = clock?.now
            book.withLock { book in
                guard snapshot.version > book.lastVersion else { return }
                book.lastVersion = snapshot.version
                let mutation = book.mutations.removeValue(forKey: snapshot.version)
                book.pending.append(
                    ReceivedState(
                        snapshot: snapshot, pulses: pulses.map(\.name), mutation: mutation,
                        time: time))
            }
        case .finished:
            book.withLock { $0.isStopped = true }
        }
        changes.bump()
    }
}

/// Tells the tester which mutation produced each version; it runs before observers see the state.
struct MutationRecorder<R: Reactor>: ReactorMiddleware {
    let recording: TesterRecording<R>

    func didReduce(mutation: R.Mutation, state: R.State, version: UInt64) {
        recording.book.withLock { $0.mutations[version] = mutation }
    }

    var interceptsActions: Bool { false }
}

/// Notices when the runtime has finished the synchronous part of one send: an observation queued behind the
/// action gets its first event only after the action's inline mutations were reduced and its effects started.
final class Probe: Sendable {
    private let state = Mutex<(fired: Bool, token: ObservationToken?)>((false, nil))

    /// Marks the probe fired; true the first time.
    func fire() -> Bool {
        state.withLock { state in
            defer {
                state.fired = true
                state.token = nil
            }
            return !state.fired
        }
    }

    /// Keeps the observation alive until the probe fires (dropping the token would cancel it).
    func hold(_ token: ObservationToken) {
        state.withLock { state in
            if !state.fired { state.token = token }
        }
    }
}

/// A counter of "something happened" (a state, a sleeper, a finished send) that a waiting test can sleep on.
final class Changes: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// How many changes there have been.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Counts a change and wakes every waiter.
    func bump() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns after the next change past `generation`, or after `duration` at most (some things, like an
    /// effect ending while others run, announce nothing: the caller looks again).
    func wait(after generation: UInt64, atMost duration: Duration) async {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let changed = state.withLock { state -> Bool in
                if state.generation != generation { return true }
                state.waiters[id] = continuation
                return false
            }
            if changed {
                continuation.resume()
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: duration)
                self?.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }
}
