import Synchronization

/// A one-shot signal an effect can wait on, so tests decide when it continues.
///
/// ```swift
/// let gate = Gate()
/// runtime.send(.effect { _ in .run { _ in try await gate.wait() } })   // held
/// gate.open()                                                            // goes on
/// ```
public final class Gate: Sendable {
    public init() {}

    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Returns once the gate is open; fails after `bound` saying it waited for `what`.
    public func wait(_ what: String = "the gate to open", within bound: Duration = defaultBound) async throws {
        try await waitFor(what, within: bound) { await self.opened() }
    }

    private func opened() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    public func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
