import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP request whose body is read as it arrives: the response head, then chunks of bytes, then the end.
///
/// Each connection has its own `URLSession` with a delegate (`bytes(for:)` is missing from FoundationNetworking),
/// invalidated as soon as the task is made so it lets go of the delegate when the task ends. Ending the
/// iteration of ``parts`` — the consumer's task cancelled, or the iterator dropped — cancels the task, which
/// closes the TCP connection.
final class EventStreamConnection: Sendable {
    /// What the connection reports, in order: at most one response, chunks, exactly one end.
    enum Part: Sendable {
        /// The head: status, `Content-Type`, and `Retry-After` when it gives seconds.
        case response(status: Int, contentType: String, retryAfter: Duration?)
        case bytes(Data)
        /// The body ended; nil when cleanly, else why not.
        case end(ReactorClientError?)
    }

    /// The parts as they arrive.
    let parts: AsyncStream<Part>
    private let running: RunningTask

    /// Starts `request` right away on a session made from `configuration`.
    init(request: URLRequest, configuration: URLSessionConfiguration) {
        let (parts, continuation) = AsyncStream.makeStream(of: Part.self)
        self.parts = parts
        let running = RunningTask()
        self.running = running
        let session = URLSession(
            configuration: configuration, delegate: Delegate(continuation: continuation, running: running),
            delegateQueue: nil)
        let task = session.dataTask(with: request)
        session.finishTasksAndInvalidate()
        continuation.onTermination = { _ in running.cancel() }
        // Nothing can have cancelled it yet: the parts have not been handed out.
        _ = running.start(task)
    }

    /// Cancels the request unless it has ended (also done when the consumer stops iterating ``parts``).
    func cancel() {
        running.cancel()
    }

    /// The session's delegate: forwards each callback as a part (a separate object, so the session's strong
    /// reference to its delegate never keeps the connection alive).
    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        let continuation: AsyncStream<Part>.Continuation
        let running: RunningTask

        init(continuation: AsyncStream<Part>.Continuation, running: RunningTask) {
            self.continuation = continuation
            self.running = running
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            let http = response as? HTTPURLResponse
            let retryAfter = http?.value(forHTTPHeaderField: "Retry-After").flatMap {
                Int($0.trimmingCharacters(in: .whitespaces))
            }
            continuation.yield(
                .response(
                    status: http?.statusCode ?? 0, contentType: http?.value(forHTTPHeaderField: "Content-Type") ?? "",
                    retryAfter: retryAfter.map { .seconds(max(0, $0)) }))
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            continuation.yield(.bytes(data))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            running.complete()
            continuation.yield(.end(error.map { ReactorClientError.transport($0) }))
            continuation.finish()
        }
    }
}

/// A `URLSessionTask` that is cancelled at most once and never after it completed: FoundationNetworking stops
/// the process when a task is cancelled between its completion callback and its removal from the session's
/// registry (swift-corelibs-foundation issue 3296), and a cancellation that comes before the task starts must
/// still reach it.
final class RunningTask: Sendable {
    private let state = Mutex<(task: URLSessionTask?, over: Bool)>((nil, false))

    /// Resumes `task`; false (and the task never runs) when ``cancel()`` came first.
    func start(_ task: URLSessionTask) -> Bool {
        state.withLock { state in
            guard !state.over else { return false }
            state.task = task
            task.resume()
            return true
        }
    }

    /// The task's completion was delivered: cancelling is no longer allowed.
    func complete() {
        state.withLock { $0.over = true }
    }

    /// Cancels the task once, if it is still running (under the lock, so completion cannot slip in between).
    func cancel() {
        state.withLock { state in
            guard !state.over else { return }
            state.over = true
            state.task?.cancel()
        }
    }
}
