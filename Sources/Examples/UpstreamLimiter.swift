import Synchronization

/// Bounds the calls in flight to one upstream: at most `concurrency` run at once, at most `queueLimit`
/// wait for a turn (first come, first served), and anything beyond is refused at once. Waiting is
/// cancellable and bounded in time, so a cancelled or stale call leaves the queue instead of running
/// later, and a burst against a dead upstream does not keep it busy long after its callers gave up.
///
/// Without it, a thousand searches against an upstream that never answers queued inside URLSession,
/// whose Linux implementation kept a core busy for as long as they waited.
///
/// ```swift
/// let limiter = UpstreamLimiter(concurrency: 4, queueLimit: 64)
/// let page = try await limiter.run { try await fetchPage() }
/// ```
public final class UpstreamLimiter: Sendable {
    /// Why a call was refused.
    public struct Busy: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var waiting: [Waiter] = []
        var nextID: UInt64 = 0
    }

    public let concurrency: Int
    public let queueLimit: Int
    /// The clock a wait's bound is measured on (a test's own, to end waits without waiting).
    public let clock: any Clock<Duration>
    private let state = Mutex(State())

    public init(concurrency: Int, queueLimit: Int, clock: any Clock<Duration> = ContinuousClock()) {
        self.concurrency = max(1, concurrency)
        self.queueLimit = max(0, queueLimit)
        self.clock = clock
    }

    /// Calls running now and waiting now (tests, diagnostics).
    public var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    /// Runs `body` once a turn is free; throws ``Busy`` when the queue is full or no turn came within
    /// `maxWait` seconds, `CancellationError` when cancelled while waiting.
    public func run<T: Sendable>(waitingAtMost maxWait: Double = .infinity, _ body: () async throws -> T) async throws
        -> T
    {
        try await acquire(maxWait: maxWait)
        defer { release() }
        return try await body()
    }

    private func acquire(maxWait: Double) async throws {
        try Task.checkCancellation()
        let ticket = state.withLock { state -> UInt64?? in
            if state.running < concurrency {
                state.running += 1
                return .some(nil)
            }
            guard state.waiting.count < queueLimit else { return nil }
            state.nextID += 1
            return .some(state.nextID)
        }
        guard let ticket else {
            throw Busy(description: "the upstream is busy: \(concurrency) calls in flight and \(queueLimit) waiting")
        }
        guard let id = ticket else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    // Cancelled before we queued: the handler below found nothing to remove.
                    if Task.isCancelled { return true }
                    state.waiting.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if cancelled { return continuation.resume(throwing: CancellationError()) }
                if maxWait.isFinite {
                    // Ends the wait unless the turn came first (then it finds nothing to remove).
                    Task { [self, clock] in
                        try? await clock.sleep(for: .seconds(maxWait))
                        remove(id)?.continuation.resume(
                            throwing: Busy(
                                description:
                                    "the upstream is busy: no turn came within \(maxWait) s "
                                    + "(\(concurrency) calls in flight)"
                            ))
                    }
                }
            }
        } onCancel: {
            remove(id)?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Takes a waiter out of the queue; nil when it already left (got its turn, timed out, or was cancelled).
    private func remove(_ id: UInt64) -> Waiter? {
        state.withLock { state -> Waiter? in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting.remove(at: index)
        }
    }

    private func release() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            // The turn passes straight to the next waiter: `running` stays the same.
            return state.waiting.removeFirst()
        }
        next?.continuation.resume()
    }
}
