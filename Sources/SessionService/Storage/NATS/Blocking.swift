import Dispatch
import NATS
import Synchronization

/// Waiting on this thread for a NATS call, for the storage protocol's calls that return results
/// (loading a session, creating one). Never used on a connection's thread, which runs the
/// completions: it would wait for itself.
enum Blocking {
    /// Starts a completion-handler call and waits for its completion; a call that does not complete
    /// within `timeout` (its own timeout plus a margin) fails with a timeout naming `what` (the call in
    /// words: "a put of i1 in the bucket b-instances", made only then).
    static func call<T: Sendable>(
        _ what: @autoclosure () -> String, timeout: Duration,
        _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, NATSError>?>(nil)
        do {
            try start { outcome in
                result.withLock { $0 = outcome }
                done.signal()
            }
        } catch {
            return .failure(error as? NATSError ?? .invalidArgument("\(error)"))
        }
        if done.wait(timeout: .now() + (timeout + .seconds(1)).timeInterval) == .timedOut {
            return .failure(.timedOut(subject: what(), server: "any NATS server", after: timeout))
        }
        return result.withLock { $0 } ?? .failure(.cancelled)
    }

    /// Runs `operation` as a task and waits for it (at start-up). The task runs on a queue of its
    /// own, not on Swift's cooperative pool: the caller may be holding a pool thread (a test starting
    /// a server in an async test), and with every pool thread waiting here nothing would run it.
    static func run<T: Sendable>(_ operation: @escaping @Sendable () async throws(NATSError) -> T) -> Result<
        T, NATSError
    > {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, NATSError>?>(nil)
        Task(executorPreference: BlockingExecutor.shared) {
            let outcome: Result<T, NATSError>
            do throws(NATSError) {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure(.cancelled)
    }
}

/// The executor of ``Blocking/run(_:)``'s tasks: a serial dispatch queue outside the cooperative pool.
private final class BlockingExecutor: TaskExecutor {
    static let shared = BlockingExecutor()
    private let queue = DispatchQueue(label: "reactor.storage.nats.blocking")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

extension Duration {
    /// As a Dispatch interval.
    var timeInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
