import Foundation
import Synchronization

/// Awaits `body`, or fails after `bound` with a ``TestFailure`` naming `what` did not happen; for any
/// wait that has no bound of its own (a gate, `waitForEffects()`, a task's value). `body` need not
/// honour cancellation: at the bound the test goes on failing and `body` is cancelled and left behind.
///
/// ```swift
/// try await waitFor("the effect to start") { await started.wait() }
/// ```
@discardableResult
public func waitFor<T: Sendable>(
    _ what: String, within bound: Duration = defaultBound, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withCheckedThrowingContinuation { continuation in
        race.start(continuation)
        race.add(
            Task {
                guard (try? await Task.sleep(for: bound)) != nil else { return }
                race.finish(.failure(TestFailure("waited \(bound.spoken) for \(what); it did not happen")))
            })
        // Where test bodies run (the body may block in a read), never on the cooperative pool.
        race.add(
            Task(executorPreference: TestThreads.shared) {
                do {
                    race.finish(.success(try await body()))
                } catch {
                    race.finish(.failure(error))
                }
            })
    }
}

/// The body and the timer of one ``waitFor(_:within:_:)``: whichever finishes first resumes the
/// waiter and cancels the other.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var tasks: [Task<Void, Never>] = []
        var finished = false
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) { state.withLock { $0.continuation = continuation } }

    func add(_ task: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            state.tasks.append(task)
            return state.finished
        }
        if finished { task.cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            defer {
                state.continuation = nil
                state.finished = true
            }
            return (state.continuation, state.tasks)
        }
        guard let continuation else { return }
        continuation.resume(with: result)
        for task in tasks { task.cancel() }
    }
}

/// Checks `condition` again and again (yielding between checks) until it holds, failing after `bound`
/// with a ``TestFailure`` naming `what`; for states no event announces (a count in an admin listing).
/// Prefer an event (a ``Recorder``, a read on a ``TestClient``) where there is one.
///
/// ```swift
/// try await eventually("the server to count the subscriber") {
///     try server.request("GET", "/admin/sessions", headers: server.admin).text.contains(#""subscribers":1"#)
/// }
/// ```
public func eventually(_ what: String, within bound: Duration = defaultBound, _ condition: () async throws -> Bool)
    async throws
{
    let start = ContinuousClock.now
    while try await !condition() {
        guard ContinuousClock.now - start < bound else {
            throw TestFailure("waited \(bound.spoken) for \(what); it did not happen")
        }
        // Not a wait for the event itself: a pause between two looks, so the check does not spin a core.
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// Runs blocking work (a build, a child process, socket reads that wait on the server) on a thread of
/// its own and awaits it: for a wait that must not hold one of the capped ``TestThreads`` (a long build),
/// or for tests whose suite is not marked ``Trait/offThePool`` (their bodies run on the cooperative
/// pool, where a blocked thread starves every in-process reactor whose effects need it).
///
/// ```swift
/// let response = try await offPool { try client.request("POST", "/sessions/s/actions?wait=true", body: body) }
/// ```
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}

extension TestClient {
    /// Runs `body`, which reads from this client and may block for long (a stream's next event, an
    /// answer held back), on a thread of its own (see ``offPool(_:)``). The client must not be used
    /// elsewhere until it returns.
    ///
    /// ```swift
    /// let event = try await watcher.offPool { try $0.nextEvent(within: .seconds(30)) }
    /// ```
    public func offPool<T: Sendable>(_ body: @escaping (TestClient) throws -> T) async throws -> T {
        // One caller at a time, handed over and back: the client and the closure never run concurrently.
        nonisolated(unsafe) let client = self
        nonisolated(unsafe) let body = body
        return try await ReactorServerTesting.offPool { try body(client) }
    }
}
