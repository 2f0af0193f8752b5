import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The threads every reactor's effects run on: a small pool of this module's own, preferred by each
/// effect task (SE-0417) and inherited by its child tasks, instead of the process-wide cooperative
/// pool. Code elsewhere in the process that blocks cooperative threads (a test suite reading sockets
/// synchronously, an app's misbehaving task) can then never starve a session's effects.
///
/// ```swift
/// Task(executorPreference: EffectExecutor.shared) { await effect() }
/// ```
public final class EffectExecutor: TaskExecutor, @unchecked Sendable {
    /// The pool every runtime uses: one thread per CPU this process may run on, at least two.
    public static let shared = EffectExecutor(threads: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    private struct Queue {
        /// Each job with the effect it belongs to when its tracer must hear of it (see ``EffectToken``).
        var jobs: [(job: UnownedJob, tag: EffectToken?)] = []
        var head = 0
    }

    private let queue = Mutex(Queue())
    private let waiting = Semaphore()

    /// Starts `threads` threads that run jobs in the order they were enqueued. They live as long as
    /// the process (the pool is meant to be created once).
    public init(threads: Int) {
        for _ in 0..<max(1, threads) {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            pthread_create(
                &thread, nil,
                { raw in
                    let executor = Unmanaged<EffectExecutor>.fromOpaque(raw!).takeRetainedValue()
                    executor.run()
                    return nil
                }, context)
            pthread_detach(thread)
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(UnownedJob(job), tag: nil)
    }

    /// Queues a job of an effect's task; with a `tag`, its tracer is told before and after it runs.
    func enqueue(_ job: UnownedJob, tag: EffectToken?) {
        queue.withLock { $0.jobs.append((job, tag)) }
        waiting.signal()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        while true {
            waiting.wait()
            let next = queue.withLock { queue -> (job: UnownedJob, tag: EffectToken?)? in
                guard queue.head < queue.jobs.count else { return nil }
                let job = queue.jobs[queue.head]
                queue.jobs[queue.head].tag = nil
                queue.head += 1
                // Drop the consumed prefix now and then, so the queue does not grow without bound.
                if queue.head >= 1024, queue.head * 2 >= queue.jobs.count {
                    queue.jobs.removeFirst(queue.head)
                    queue.head = 0
                }
                return job
            }
            guard let next else { continue }
            if let tag = next.tag, let tracer = tag.tracer {
                // Each stretch of an effect's code runs between these, on whichever thread takes it.
                tracer.willRun(tag.call, seq: tag.seq ?? 0, context: tag.context)
                next.job.runSynchronously(on: tag.asUnownedTaskExecutor())
                tracer.didRun()
            } else {
                next.job.runSynchronously(on: executor)
            }
        }
    }
}

/// A counting semaphore over a futex-backed POSIX semaphore (on the heap: it must never move).
private final class Semaphore: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() { sem_init(semaphore, 0, 0) }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func signal() { sem_post(semaphore) }

    func wait() {
        while sem_wait(semaphore) != 0 {}
    }
}
