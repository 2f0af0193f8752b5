import Logs
import Synchronization

/// Values reported as they happen (observer events, log records, stream notices, a child's output
/// lines), kept in arrival order. A test reads them all (``values``) or waits, always with a bound,
/// for the next one that matches (``next(_:within:where:)``) or for a count (``waitForCount(_:_:within:)``).
///
/// ```swift
/// let notices = Recorder<EventStreamNotice>()
/// let stream = writer.startEventStream(onNotice: notices.record)
/// let closed = try await notices.next("the stream to close") { $0 != .drained }
/// ```
/// `next` reads like a cursor: each call returns a value after the one it returned last, so values
/// that do not match are passed over, never returned later. ``values`` still holds them all.
public final class Recorder<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let kind: Kind
        let continuation: CheckedContinuation<[Value], any Error>
    }

    private enum Kind {
        case next(@Sendable (Value) -> Bool)
        case count(Int)
        case all(@Sendable ([Value]) -> Bool)
    }

    private struct State {
        var values: [Value] = []
        /// Where `next` looks from.
        var cursor = 0
        var waiters: [Waiter] = []
        var nextID = 0

        /// Takes what `kind` waits for, when it is there: the matching value for `.next`, every value
        /// so far for `.count` and `.all`.
        mutating func take(_ kind: Kind) -> [Value]? {
            switch kind {
            case .next(let matching):
                guard let index = values[cursor...].firstIndex(where: matching) else {
                    cursor = values.count
                    return nil
                }
                cursor = index + 1
                return [values[index]]
            case .count(let count):
                return values.count >= count ? values : nil
            case .all(let condition):
                return condition(values) ? values : nil
            }
        }
    }

    private let state = Mutex(State())

    /// An empty recorder.
    public init() {}

    /// Records `value` and wakes the waits it satisfies.
    @Sendable public func record(_ value: Value) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Value], any Error>, [Value])] in
            state.values.append(value)
            var ready: [(CheckedContinuation<[Value], any Error>, [Value])] = []
            var waiting: [Waiter] = []
            for waiter in state.waiters {
                if let taken = state.take(waiter.kind) {
                    ready.append((waiter.continuation, taken))
                } else {
                    waiting.append(waiter)
                }
            }
            state.waiters = waiting
            return ready
        }
        for (continuation, value) in ready { continuation.resume(returning: value) }
    }

    /// Everything recorded so far, oldest first.
    public var values: [Value] { state.withLock { $0.values } }

    /// How many values were recorded.
    public var count: Int { state.withLock { $0.values.count } }

    /// The next value (after the last one `next` returned) that satisfies `matching`, waiting for it
    /// if needed; fails after `bound` saying it waited for `what`.
    @discardableResult
    public func next(
        _ what: String = "the next recorded value", within bound: Duration = defaultBound,
        where matching: @escaping @Sendable (Value) -> Bool = { _ in true }
    ) async throws -> Value {
        // `.next` hands back exactly the value it matched.
        try await wait(.next(matching), what: what, bound: bound)[0]
    }

    /// Returns every value recorded once there are at least `count`; fails after `bound`.
    @discardableResult
    public func waitForCount(_ count: Int, _ what: String? = nil, within bound: Duration = defaultBound) async throws
        -> [Value]
    {
        try await wait(.count(count), what: what ?? "\(count) recorded values", bound: bound)
    }

    /// Returns every value recorded once `condition` holds for them all; fails after `bound`.
    ///
    /// ```swift
    /// try await statuses.waitUntil("a reconnect") { $0.dropFirst(2).contains(.connected) }
    /// ```
    @discardableResult
    public func waitUntil(
        _ what: String, within bound: Duration = defaultBound, _ condition: @escaping @Sendable ([Value]) -> Bool
    ) async throws -> [Value] {
        try await wait(.all(condition), what: what, bound: bound)
    }

    private func wait(_ kind: Kind, what: String, bound: Duration) async throws -> [Value] {
        try await withCheckedThrowingContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if let taken = state.take(kind) {
                    continuation.resume(returning: taken)
                    return nil
                }
                state.nextID += 1
                state.waiters.append(Waiter(id: state.nextID, kind: kind, continuation: continuation))
                return state.nextID
            }
            guard let id else { return }
            Task { [self] in
                try? await Task.sleep(for: bound)
                let expired = state.withLock { state -> (Waiter, Int)? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return (state.waiters.remove(at: index), state.values.count)
                }
                guard let (waiter, seen) = expired else { return }
                let last = self.values.suffix(5).map { "\($0)" }.joined(separator: ", ")
                waiter.continuation.resume(
                    throwing: TestFailure(
                        "waited \(bound.spoken) for \(what); it did not happen "
                            + "(\(seen) values recorded, the last: \(last))"
                    ))
            }
        }
    }
}

/// A recorder of log records is a log handler: give it to a `Logger` to wait for what the code logs.
///
/// ```swift
/// let logs = Recorder<LogRecord>()
/// let logger = Logger(label: "test", level: .trace, handler: logs)
/// let server = HTTPServer(configuration: configuration, responder: app, logger: logger)
/// let closed = try await logs.next("the connection to close") { $0.message == "connection closed" }
/// ```
extension Recorder: LogHandler where Value == LogRecord {
    /// Records `record`.
    public func log(_ record: LogRecord) { self.record(record) }

    /// The first record (logged so far or later) whose message contains `text`; fails after `bound`.
    @discardableResult
    public func waitForMessage(containing text: String, within bound: Duration = defaultBound) async throws -> LogRecord
    {
        let records = try await waitUntil("a log line \(text.debugDescription)", within: bound) {
            $0.contains { $0.message.contains(text) }
        }
        return records.first { $0.message.contains(text) }!
    }
}
