import Examples
import Synchronization
import Testing

/// The limiter that keeps the search example from piling up calls to an upstream that never answers.
@Suite struct UpstreamLimiterTests {
    /// A call the test finishes by hand.
    final class Gate: Sendable {
        private let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])
        let started = Mutex<[Int]>([])

        func enter(_ number: Int) async {
            await withCheckedContinuation { continuation in
                waiting.withLock { $0.append(continuation) }
                started.withLock { $0.append(number) }
            }
        }

        func openOne() { waiting.withLock { $0.isEmpty ? nil : $0.removeFirst() }?.resume() }

        var entered: Int { started.withLock { $0.count } }
    }

    /// How each call ended, by number.
    final class Outcomes: Sendable {
        let byNumber = Mutex<[Int: String]>([:])

        func set(_ number: Int, _ outcome: String) { byNumber.withLock { $0[number] = outcome } }
        var count: Int { byNumber.withLock { $0.count } }
        func numbers(where predicate: (String) -> Bool) -> [Int] {
            byNumber.withLock { $0.filter { predicate($0.value) }.keys.sorted() }
        }
    }

    /// Polls `condition` for up to ten seconds; the calls under test run on other tasks.
    static func eventually(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<10_000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("timed out waiting until \(what)")
        throw CancellationError()
    }

    @Test func atMostConcurrencyRunAndTheRestWaitInOrderOrAreRefused() async throws {
        let limiter = UpstreamLimiter(concurrency: 2, queueLimit: 2)
        let gate = Gate()
        let results = Outcomes()
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<6 {
                group.addTask {
                    do {
                        try await limiter.run { await gate.enter(number) }
                        results.set(number, "ran")
                    } catch {
                        results.set(number, "\(error)")
                    }
                }
                // One at a time, so the queue order is the order they were asked.
                try? await Self.eventually("call \(number) is counted") {
                    let load = limiter.load
                    return load.running + load.waiting + results.count == number + 1
                }
            }
            try? await Self.eventually("two run") { gate.entered == 2 }
            #expect(limiter.load.running == 2)
            #expect(limiter.load.waiting == 2)
            #expect(results.numbers { $0.contains("busy") } == [4, 5], "the two beyond the queue are refused at once")
            gate.openOne()
            try? await Self.eventually("the first waiter runs") { gate.entered == 3 }
            gate.openOne()
            try? await Self.eventually("the second waiter runs") { gate.entered == 4 }
            gate.openOne()
            gate.openOne()
        }
        #expect(gate.started.withLock { $0 } == [0, 1, 2, 3], "first come, first served")
        #expect(results.numbers { $0 == "ran" } == [0, 1, 2, 3])
        #expect(limiter.load.running == 0 && limiter.load.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let limiter = UpstreamLimiter(concurrency: 1, queueLimit: 4)
        let gate = Gate()
        let first = Task { try await limiter.run { await gate.enter(0) } }
        try await Self.eventually("the first runs") { gate.entered == 1 }
        let second = Task { try await limiter.run { await gate.enter(1) } }
        try await Self.eventually("the second waits") { limiter.load.waiting == 1 }
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(limiter.load.waiting == 0)
        gate.openOne()
        try await first.value
        #expect(gate.started.withLock { $0 } == [0], "the cancelled call never ran")
        #expect(limiter.load.running == 0)
    }

    @Test func aWaiterGivesUpAfterItsMaximumWait() async throws {
        let limiter = UpstreamLimiter(concurrency: 1, queueLimit: 4)
        let gate = Gate()
        let first = Task { try await limiter.run { await gate.enter(0) } }
        try await Self.eventually("the first runs") { gate.entered == 1 }
        await #expect(throws: UpstreamLimiter.Busy.self) {
            try await limiter.run(waitingAtMost: 0.05) { await gate.enter(1) }
        }
        #expect(limiter.load.waiting == 0)
        gate.openOne()
        try await first.value
        #expect(gate.entered == 1)
    }
}
