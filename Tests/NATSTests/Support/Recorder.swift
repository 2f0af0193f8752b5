import Logs
import Synchronization
import Testing

/// Values that arrive from callbacks (messages, replies, status changes), and bounded waits for
/// the list to satisfy a condition: an event wakes the waiter, the timeout only fails it.
final class Recorder<Value: Sendable>: Sendable {
    private struct Waiter {
        var id: Int
        var condition: @Sendable ([Value]) -> Bool
        var continuation: CheckedContinuation<[Value]?, Never>
    }

    private let state = Mutex<(values: [Value], waiters: [Waiter], nextID: Int, expired: Set<Int>)>(([], [], 0, []))

    init() {}

    /// Everything recorded so far, in order.
    var values: [Value] { state.withLock { $0.values } }

    func record(_ value: Value) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Value]?, Never>, [Value])] in
            state.values.append(value)
            let values = state.values
            var ready: [(CheckedContinuation<[Value]?, Never>, [Value])] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(values) else { return false }
                ready.append((waiter.continuation, values))
                return true
            }
            return ready
        }
        for (continuation, values) in ready { continuation.resume(returning: values) }
    }

    /// Waits until `condition` holds for the values; throws, naming `what` and what was seen, after `timeout`.
    @discardableResult
    func wait(for what: String, timeout: Duration = .seconds(10), until condition: @escaping @Sendable ([Value]) -> Bool) async throws -> [Value] {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiter = state.withLock { state -> CheckedContinuation<[Value]?, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.expired.insert(id)
                    return nil
                }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
        defer { timer.cancel() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<[Value]?, Never>) in
            let immediate = state.withLock { state -> [Value]?? in
                if condition(state.values) { return .some(state.values) }
                if state.expired.remove(id) != nil { return .some(nil) }
                state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        guard let result else {
            let seen = values
            throw FixtureError(description: "timed out after \(timeout) waiting for \(what); recorded \(seen.count): \(seen.suffix(10))")
        }
        return result
    }

    /// Waits until at least `count` values are recorded.
    @discardableResult
    func wait(forCount count: Int, _ what: String, timeout: Duration = .seconds(10)) async throws -> [Value] {
        try await wait(for: "\(count) \(what)", timeout: timeout) { $0.count >= count }
    }
}

/// A log handler that records into a ``Recorder``, so a test can wait for a log line.
struct RecorderLogHandler: LogHandler {
    let records = Recorder<LogRecord>()

    func log(_ record: LogRecord) { records.record(record) }

    /// Waits for a record whose message contains `text`; returns it.
    @discardableResult
    func wait(forMessage text: String, timeout: Duration = .seconds(10)) async throws -> LogRecord {
        let records = try await records.wait(for: "a log line \"\(text)\"", timeout: timeout) { $0.contains { $0.message.contains(text) } }
        return records.first { $0.message.contains(text) }!
    }
}
