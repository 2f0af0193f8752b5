import Synchronization

/// One running effect task: its cancellation id, whether it was cancelled, and the task to cancel. With a
/// tracer it is also the task's executor: its jobs run on ``EffectExecutor/shared`` between the tracer's
/// `willRun(call, seq)` and `didRun()`, so a crash in the effect's code names its action.
@usableFromInline
final class EffectToken: TaskExecutor, Sendable {
    let id: EffectID?
    /// The action that started the effect; its mutations are reported under this seq when refused.
    @usableFromInline let seq: UInt64?
    /// Where a refused mutation of the effect is noted for the action's completion (nil: nobody waits).
    @usableFromInline let outcome: ActionOutcome?
    /// Told around every job of the task (nil: the task runs on the shared pool directly).
    let tracer: (any ReactorCallTracer)?
    /// What the task runs: an effect, or a merged source.
    let call: ReactorCall
    /// What the tracer kept as the effect started (``ReactorCallTracer/context(forEffectOf:)``).
    let context: (any AnyObject & Sendable)?
    private let cancelled = Atomic<Bool>(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(
        id: EffectID?, seq: UInt64?, outcome: ActionOutcome?, tracer: (any ReactorCallTracer)? = nil,
        call: ReactorCall = .effect, context: (any AnyObject & Sendable)? = nil
    ) {
        self.id = id
        self.seq = seq
        self.outcome = outcome
        self.tracer = tracer
        self.call = call
        self.context = context
    }

    /// The executor a task of this effect prefers: this token when a tracer must hear of its jobs.
    var executor: any TaskExecutor { tracer == nil ? EffectExecutor.shared : self }

    @usableFromInline func enqueue(_ job: consuming ExecutorJob) {
        EffectExecutor.shared.enqueue(UnownedJob(job), tag: self)
    }

    /// Set once cancelled; a mutation emitted afterwards, or still queued, is dropped.
    @usableFromInline var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Records the task to cancel; cancels it at once if `cancel()` came first.
    func attach(_ newTask: Task<Void, Never>) {
        task.withLock { $0 = newTask }
        if isCancelled { newTask.cancel() }
    }

    /// Marks the effect cancelled and cancels its task.
    @usableFromInline func cancel() {
        cancelled.store(true, ordering: .releasing)
        task.withLock { $0 }?.cancel()
    }
}

/// The first failure of an action whose effects are still running, held until its completion fires.
@usableFromInline
class ActionOutcome: @unchecked Sendable {
    // Unchecked: a non-final class; its only state is the mutex.
    let failure = Mutex<ReactorError?>(nil)

    @usableFromInline init() {}

    /// Notes `error` unless an earlier failure was noted.
    @usableFromInline func fail(_ error: ReactorError) {
        failure.withLock { if $0 == nil { $0 = error } }
    }
}

/// Counts the tasks an action started; the action's `send` completion fires when the last one ends.
@usableFromInline
final class CompletionTracker<State: Sendable>: ActionOutcome, @unchecked Sendable {
    let pending = Atomic<Int>(1)
    let completion: @Sendable (Result<Snapshot<State>, ReactorError>) -> Void

    @usableFromInline init(_ completion: @escaping @Sendable (Result<Snapshot<State>, ReactorError>) -> Void) {
        self.completion = completion
    }

    func retain() { pending.add(1, ordering: .relaxed) }

    /// Drops one holder; the last one calls the completion with the failure noted, else the snapshot
    /// `current()` reads then.
    @usableFromInline func release(_ current: () -> Result<Snapshot<State>, ReactorError>) {
        if pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            if let error = failure.withLock({ $0 }) {
                completion(.failure(error))
            } else {
                completion(current())
            }
        }
    }
}

extension EffectToken {
    /// Returns once the effect's task has ended.
    func wait() async {
        await task.withLock { $0 }?.value
    }
}
