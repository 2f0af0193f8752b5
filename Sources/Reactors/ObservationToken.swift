import Synchronization

/// Keeps an observation alive; `cancel()` (or dropping the token) stops further events.
public final class ObservationToken: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    /// Runs `onCancel` once, on the first `cancel()` or at deinit.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    /// Stops the observation; the handler may still be running its current event, but gets no later one.
    public func cancel() {
        onCancel.withLock { body in
            let taken = body
            body = nil
            return taken
        }?()
    }

    deinit { cancel() }
}

/// One registered observer; `isActive` is cleared by its token so an in-progress dispatch skips it.
@usableFromInline
final class ObserverBox<State: Sendable>: Sendable {
    @usableFromInline let handler: @Sendable (StateEvent<State>) -> Void
    @usableFromInline let isActive = Atomic<Bool>(true)

    @usableFromInline init(_ handler: @escaping @Sendable (StateEvent<State>) -> Void) { self.handler = handler }

    /// Delivers `event` unless the observation was cancelled.
    @inlinable func deliver(_ event: StateEvent<State>) {
        if isActive.load(ordering: .relaxed) { handler(event) }
    }
}
