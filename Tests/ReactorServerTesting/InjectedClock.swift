import HTTPServer
import ReactorsTesting
import SessionService
import Synchronization

/// The one clock of a test: reactors sleep on ``reactorClock`` (a `TestClock`), the service schedules
/// its deadlines and maintenance on it (a `ServiceClock`), and the HTTP server times connections and
/// keep-alive comments by it (a `ServerClock`). Nothing moves until the test calls ``advance(by:)``,
/// which moves all three together and runs what fell due, earliest first.
///
/// ```swift
/// let server = try TestServer { $0.sessions.idleTTLSeconds = 60 }   // a TestServer makes one
/// let id = try server.createSession("counter")
/// await server.clock.advance(by: .seconds(76))   // the idle sweep ran: the session is gone
/// #expect(try server.request("GET", "/sessions/\(id)").status == 404)
/// ```
public final class InjectedClock: ServiceClock {
    /// What reactors sleep on (`FruitReactor(clock: clock.reactorClock)`); it moves with this clock.
    /// Wait on it (`waitForSleepers`), but move time with ``advance(by:)``: advancing it alone would move
    /// the service's and the HTTP server's time without running what falls due.
    public let reactorClock = TestClock()
    /// The delay of every piece of work scheduled on this clock, in order: wait on it to know a deadline
    /// is armed (`try await clock.scheduled.next { $0 == .seconds(5) }`).
    public let scheduled = Recorder<Duration>()

    private struct Pending {
        var id: Int
        var deadline: Duration
        var handle: ScheduledWork
        var work: @Sendable () -> Void
    }

    private struct State {
        var pending: [Pending] = []
        var nextID = 0
        var observers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    /// Where time starts, so that a monotonic reading is never zero (the service subtracts TTLs from it).
    private static let origin = Duration.seconds(1)
    /// The wall-clock time the test world starts at (2026-09-21), for `"at"` timestamps.
    private static let wallOrigin: Int64 = 1_790_000_000_000_000_000

    /// ``reactorClock``: what a reactor's `ReactorContext.clock` is on a test server.
    public var clockForReactors: any Clock<Duration> { reactorClock }

    /// A clock at its origin with nothing scheduled.
    public init() {}

    // MARK: ServerClock and ServiceClock

    /// Time since an arbitrary origin; moves only through ``advance(by:)``.
    public func now() -> Duration { Self.origin + reactorClock.now.offset }

    /// ``now()`` in nanoseconds.
    public func monotonicNanoseconds() -> UInt64 {
        let (seconds, attoseconds) = now().components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// A fixed wall-clock origin plus ``now()``.
    public func wallNanoseconds() -> Int64 { Self.wallOrigin + Int64(monotonicNanoseconds()) }

    /// False: HTTP loops sleep until an advance wakes them.
    public var advancesByItself: Bool { false }

    /// Registers an HTTP loop's wake-up, run after every ``advance(by:)``.
    public func onAdvance(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(action) }
    }

    /// Runs `work` on the advancing task once ``advance(by:)`` passes `delay` from now.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let deadline = now() + max(delay, .zero)
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let handle = ScheduledWork { [weak self] in
            self?.state.withLock { $0.pending.removeAll { $0.id == id } }
        }
        state.withLock { $0.pending.append(Pending(id: id, deadline: deadline, handle: handle, work: work)) }
        scheduled.record(delay)
        return handle
    }

    /// How many pieces of scheduled work have neither run nor been cancelled.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    // MARK: moving time

    /// Moves time forward by `duration`: runs every piece of scheduled work that falls due, in deadline
    /// order with the clock standing at its deadline, wakes the reactors' sleepers on the way, and lets the
    /// HTTP loops check their timers at the end.
    public func advance(by duration: Duration) async {
        let target = now() + duration
        while let due = takeDue(upTo: target) {
            await moveReactorClock(to: due.deadline)
            if due.handle.claim() { due.work() }
        }
        await moveReactorClock(to: target)
        for observer in state.withLock({ $0.observers }) { observer() }
    }

    private func takeDue(upTo target: Duration) -> Pending? {
        state.withLock { state in
            guard
                let index = state.pending.indices.filter({ state.pending[$0].deadline <= target })
                    .min(by: {
                        (state.pending[$0].deadline, state.pending[$0].id) < (
                            state.pending[$1].deadline, state.pending[$1].id
                        )
                    })
            else { return nil }
            return state.pending.remove(at: index)
        }
    }

    private func moveReactorClock(to time: Duration) async {
        let step = time - now()
        if step > .zero { await reactorClock.advance(by: step) }
    }
}
