import Foundation
import ReactorServerTesting
import Synchronization

/// A value tests wait on: every `update` wakes the waiters whose condition now holds. Waiting is bounded; the
/// bound fails the test with what was expected and what the value was, never a silent pass.
final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var value: Value
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// The value now.
    var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes the waiters it satisfies.
    func update(_ change: (inout Value) -> Void) {
        let woken = state.withLock { state -> [(CheckedContinuation<Value, any Error>, Value)] in
            change(&state.value)
            let value = state.value
            let ready = state.waiters.filter { $0.condition(value) }
            state.waiters.removeAll { waiter in ready.contains { $0.id == waiter.id } }
            return ready.map { ($0.continuation, value) }
        }
        for (continuation, value) in woken { continuation.resume(returning: value) }
    }

    /// Returns the value once `condition` holds; fails after `timeout` saying `what` was awaited.
    @discardableResult
    func wait(_ what: String, timeout: Duration = defaultBound, until condition: @escaping @Sendable (Value) -> Bool)
        async throws -> Value
    {
        do {
            return try await waitFor(what, within: timeout) { try await self.waitUnbounded(condition) }
        } catch let failure as TestFailure {
            throw TestFailure("\(failure.description); the value is \(value)")
        }
    }

    private func waitUnbounded(_ condition: @escaping @Sendable (Value) -> Bool) async throws -> Value {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Value? in
                    if condition(state.value) { return state.value }
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Value, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }
}
