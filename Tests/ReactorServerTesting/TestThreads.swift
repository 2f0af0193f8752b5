import Foundation
import Testing

/// The threads test bodies run on, so that a test blocked in a socket read (``TestClient``, the
/// synchronous ``TestServer/request(_:_:headers:body:json:)``) never holds a thread of Swift's
/// cooperative pool. That pool has one thread per core, two on a small CI machine, and the server under
/// test runs its reactors' effects on it: two tests blocked on answers that need an effect would stall
/// every in-process server until their reads time out.
///
/// A test body awaits and blocks here; the server's effects and the actors they call keep the
/// cooperative pool. Threads start when work arrives and none is idle, up to a cap, so a crowd of
/// blocked tests queues instead of starting hundreds of threads.
///
/// ```swift
/// @Suite(.offThePool) struct MyTests { … }
/// ```
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// The executor of every suite marked ``Trait/offThePool``.
    public static let shared = TestThreads(limit: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0
    private var threads = 0
    private var idle = 0
    private let limit: Int

    /// An executor that starts at most `limit` threads.
    public init(limit: Int) {
        self.limit = limit
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // A thread woken for an earlier job may not have taken it yet: count the waiting jobs.
        let start = jobs.count - next > idle && threads < limit
        if start { threads += 1 } else { condition.signal() }
        condition.unlock()
        guard start else { return }
        let thread = Thread { [self] in work() }
        thread.name = "test body"
        thread.start()
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs each test of a suite on ``TestThreads`` (see there why); nested suites and every case of a
/// parameterized test included.
public struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Test bodies off Swift's cooperative pool, on ``TestThreads``.
    public static var offThePool: Self { OffThePoolTrait() }
}
