import Synchronization

/// One running effect task: its cancellation id, whether it was cancelled, and the task to cancel.
@usableFromInline
final class EffectToken: Sendable {
    let id: EffectID?
    private let cancelled = Atomic<Bool>(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(id: EffectID?) { self.id = id }

    /// Set once cancelled; a mutation emitted afterwards, or still queued, is dropped.
    @usableFromInline var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Records the task to cancel; cancels it at once if `cancel()` came first.
    func attach(_ newTask: Task<Void, Never>) {
        task.withLock { $0 = newTask }
        if isCancelled { newTask.cancel() }
    }

    /// Marks the effect cancelled and cancels its task.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        task.withLock { $0 }?.cancel()
    }
}

/// Counts the tasks an action started; the action's `send` completion fires when the last one ends.
@usableFromInline
final class CompletionTracker<State: Sendable>: Sendable {
    let pending = Atomic<Int>(1)
    let completion: @Sendable (Result<Snapshot<State>, ReactorError>) -> Void

    @usableFromInline init(_ completion: @escaping @Sendable (Result<Snapshot<State>, ReactorError>) -> Void) {
        self.completion = completion
    }

    func retain() { pending.add(1, ordering: .relaxed) }

    /// Drops one holder; the last one calls the completion with the snapshot `current()` reads then.
    @usableFromInline func release(_ current: () -> Result<Snapshot<State>, ReactorError>) {
        if pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            completion(current())
        }
    }
}

extension EffectToken {
    /// Returns once the effect's task has ended.
    func wait() async {
        await task.withLock { $0 }?.value
    }
}
