import ReactorServerTesting
import Reactors
import ReactorsTesting
import Synchronization
import Testing

@Suite(.offThePool) struct TestClockTests {
    @Test func sleepersWakeInDeadlineOrderOnlyWhenTimeReachesThem() async throws {
        let clock = TestClock()
        let woke = EventLog()
        let tasks = [3, 1, 2].map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                woke.append("\(seconds)")
            }
        }
        await clock.waitForSleepers(3)
        await clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 3)
        await clock.advance(by: .milliseconds(1))
        try await waitFor("the 1 s sleeper to wake") { try await tasks[1].value }
        #expect(woke.all == ["1"])
        await clock.run()
        try await waitFor("the other sleepers to wake") {
            try await tasks[0].value
            try await tasks[2].value
        }
        #expect(woke.all.sorted() == ["1", "2", "3"])
        #expect(clock.now == TestClock.Instant(offset: .seconds(3)))
    }

    @Test func cancellingASleeperThrowsAndRemovesIt() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func aDeadlineAlreadyPassedDoesNotSuspend() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(2)))
        #expect(clock.sleeperCount == 0)
    }
}

@Suite(.offThePool) struct ReactorTesterTests {
    @Test func passesWhenStatesMatch() async {
        let tester = ReactorTester(CountingReactor())
        await tester.send(.increaseTwice, expecting: .init(value: 1), .init(value: 2))
        await tester.finish()
    }

    @Test func failsOnAWrongState() async {
        let tester = ReactorTester(CountingReactor())
        await withKnownIssue {
            await tester.send(.increase, expecting: .init(value: 2))
        }
        await tester.finish()
    }

    @Test func failsOnUnassertedStates() async {
        let tester = ReactorTester(CountingReactor())
        await tester.send(.increaseTwice, expecting: .init(value: 1))
        await withKnownIssue {
            await tester.finish()
        }
    }

    @Test func failsWhenEffectsOutliveTheTest() async {
        let tester = ReactorTester(ReactorRuntimeBox.makeReactor(), timeout: .milliseconds(200))
        let gate = Gate()
        await tester.send(.effect { _ in .run { _ in try await gate.wait() } })
        await withKnownIssue {
            await tester.finish()
        }
        gate.open()
    }
}
