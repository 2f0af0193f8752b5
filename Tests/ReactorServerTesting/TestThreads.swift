import Examples
import Foundation
import Testing

/// The threads test bodies run on, so that a test blocked in a socket read (``TestClient``, the
/// synchronous ``TestServer/request(_:_:headers:body:json:)``) never holds a thread of Swift's
/// cooperative pool. That pool has one thread per core, two on a small CI machine, and the server under
/// test runs its reactors' effects on it: two tests blocked on answers that need an effect would stall
/// every in-process server until their reads time out.
///
/// A test body awaits and blocks here; the server's effects and the actors they call keep the
/// cooperative pool. A thread starts whenever work arrives and none is idle (the limit only guards
/// against a runaway): how many tests run at once is ``OffThePoolTrait``'s admission, not this pool's.
///
/// ```swift
/// @Suite(.offThePool) struct MyTests { … }
/// ```
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// The executor of every suite marked ``Trait/offThePool``.
    public static let shared = TestThreads(limit: 256)

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

/// Runs each test of a suite on ``TestThreads`` (see there why), nested suites and every case of a
/// parameterized test included, and at most ``admitted`` of them at once.
///
/// Swift Testing starts every test at once. Each runs until it blocks or awaits, and a waiter that is
/// resumed queues behind all of them: at the start of a sanitizer run, where a test's first requests
/// take seconds, a waiter resumed after a few hundred test starts timed out at its 30 s bound (every
/// ReactorClient test at the same second). Tests past the admission wait suspended, on no thread.
public struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    /// How many test cases run at once (`TEST_PARALLELISM` overrides it): three per core, at least six.
    public static let admitted =
        ProcessInfo.processInfo.environment["TEST_PARALLELISM"].flatMap { Int($0) }
        ?? max(6, 3 * ProcessInfo.processInfo.activeProcessorCount)
    /// First come, first served; no queue limit (every test gets its turn).
    private static let admission = UpstreamLimiter(concurrency: admitted, queueLimit: .max)

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A test with a time limit is let in at once: its limit counts from its start, admission
        // included (seen: a cluster suite's first test over its 5 minutes under ThreadSanitizer, most
        // of them spent waiting here). Those suites are serialized, so they add one test each.
        guard test.timeLimit == nil else {
            return try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
        }
        try await Self.admission.run {
            try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
        }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Test bodies off Swift's cooperative pool, on ``TestThreads``.
    public static var offThePool: Self { OffThePoolTrait() }
}
