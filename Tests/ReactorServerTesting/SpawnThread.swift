import Dispatch
import Foundation
import Synchronization

/// The one thread every ``TestProcess`` is started from, so that what a test starts dies with the test
/// process, however it ends (a sanitizer's abort, a crash, a CI timeout's SIGKILL: no `deinit` runs).
///
/// Each program is started through `setpriv --pdeathsig KILL`, which asks the kernel to kill it when its
/// parent dies. For the kernel that parent is the *thread* that started it, not the process: started
/// from a concurrency-pool thread, which exits when idle, a server would be killed in the middle of its
/// test. This thread is never left, so its death is the test process's.
///
/// ```swift
/// let (status, pid) = SpawnThread.shared.run { spawnOnThisThread() }
/// ```
final class SpawnThread: Sendable {
    /// The thread, started on first use.
    static let shared = SpawnThread()

    /// `setpriv` (util-linux), or nil where it is missing: programs then start without the request.
    static let setpriv: String? = ["/usr/bin/setpriv", "/bin/setpriv"].first { access($0, X_OK) == 0 }

    private let queue = Mutex<[Job]>([])
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                pending.wait()
                for job in queue.withLock({ jobs in
                    defer { jobs = [] }
                    return jobs
                }) { job.run() }
            }
        }
        thread.name = "test spawner"
        thread.start()
    }

    /// Runs `body` on the spawner thread and returns its result; the caller waits.
    func run<T>(_ body: () -> T) -> T {
        let result: Any = withoutActuallyEscaping(body) { body in
            let job = Job(body)
            queue.withLock { $0.append(job) }
            pending.signal()
            job.done.wait()
            // The semaphore orders the spawner's write of `result` before this read.
            return job.result!
        }
        return result as! T
    }

    /// Returns once every spawn asked for before this call is over. glibc's posix_spawn returns only
    /// after the child has called exec (or failed), so no child started so far still holds copies of
    /// this process's descriptors: a file lock released by closing its descriptor is then free.
    func finishSpawnsBegun() {
        run { () }
    }

    /// `arguments` (the program first) prefixed so the program dies with this process, when it can.
    static func dyingWithParent(_ arguments: [String]) -> [String] {
        guard let setpriv else { return arguments }
        return [setpriv, "--pdeathsig", "KILL", "--"] + arguments
    }

    /// One call handed to the thread. Unchecked: `body` and `result` are touched by the spawner thread
    /// only between the caller's signal and its wait, which order them.
    private final class Job: @unchecked Sendable {
        var body: (() -> Any)?
        var result: Any?
        let done = DispatchSemaphore(value: 0)

        init<T>(_ body: @escaping () -> T) { self.body = { body() } }

        func run() {
            result = body?()
            // Released before the caller goes on: the caller's closure must not outlive its call.
            body = nil
            done.signal()
        }
    }
}
