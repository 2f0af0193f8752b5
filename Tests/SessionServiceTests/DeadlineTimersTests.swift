import Dispatch
import ReactorServerTesting
import Synchronization
import Testing

@testable import SessionService

/// The real clock's scheduled work (``DeadlineTimers``): one Dispatch timer for every deadline, re-armed when
/// an earlier one comes; cancelled work never runs.
@Suite struct DeadlineTimersTests {
    static func inMilliseconds(_ milliseconds: UInt64) -> UInt64 {
        DispatchTime.now().uptimeNanoseconds + milliseconds * 1_000_000
    }

    @Test func anEarlierDeadlineScheduledAfterALaterOneRunsFirstAndCancelledWorkNeverRuns() async throws {
        let timers = DeadlineTimers()
        let ran = Mutex<[String]>([])
        let late = ScheduledWork()
        timers.schedule(late, at: Self.inMilliseconds(60_000)) { ran.withLock { $0.append("late") } }
        let cancelled = ScheduledWork()
        timers.schedule(cancelled, at: Self.inMilliseconds(100)) { ran.withLock { $0.append("cancelled") } }
        cancelled.cancel()
        let soon = ScheduledWork()
        timers.schedule(soon, at: Self.inMilliseconds(40)) { ran.withLock { $0.append("soon") } }
        let after = ScheduledWork()
        timers.schedule(after, at: Self.inMilliseconds(200)) { ran.withLock { $0.append("after") } }
        try await eventually("the work due in 40 ms to run, though one due in a minute was armed first") {
            ran.withLock { $0 }.contains("soon")
        }
        try await eventually("the work due in 200 ms to run") { ran.withLock { $0 }.contains("after") }
        // The cancelled work came due long before: it was dropped, not run.
        #expect(Set(ran.withLock { $0 }) == ["soon", "after"])
        late.cancel()
    }

    @Test func workScheduledByTheSystemClockRunsOnceItIsDue() async throws {
        let ran = Atomic<Int>(0)
        SystemServiceClock().schedule(after: .milliseconds(5)) { ran.add(1, ordering: .relaxed) }
        let cancelled = SystemServiceClock().schedule(after: .seconds(1)) { ran.add(100, ordering: .relaxed) }
        cancelled.cancel()
        try await eventually("scheduled work to run") { ran.load(ordering: .relaxed) >= 1 }
        #expect(ran.load(ordering: .relaxed) == 1)
    }

    /// Cancelled `?wait=true` timeouts came due one by one and each re-armed the timer: one wake-up per action.
    @Test func cancelledDeadlinesWakeNothingAndTheTimerIsArmedOnlyForTheEarliestLiveOne() async throws {
        let timers = DeadlineTimers()
        let ran = Mutex<[Int]>([])
        let handles = (0..<50).map { _ in ScheduledWork() }
        for (index, handle) in handles.enumerated() {
            timers.schedule(handle, at: Self.inMilliseconds(30 + 2 * UInt64(index))) {
                ran.withLock { $0.append(index) }
            }
        }
        for handle in handles { handle.cancel() }
        let live = ScheduledWork()
        timers.schedule(live, at: Self.inMilliseconds(300)) { ran.withLock { $0.append(-1) } }
        try await eventually("the live work due in 300 ms to run") { ran.withLock { $0 } == [-1] }
        // One wake-up for the deadline armed before the cancellations (30 ms), one for the live work; none
        // for the 49 cancelled deadlines between them.
        #expect(timers.wakeUps == 2)
        #expect(ran.withLock { $0 } == [-1])
    }

    /// Cancelled timeouts pile up under a live entry (a periodic task's, due sooner). When it fired, all of them
    /// were dropped at once under the lock every `schedule` takes: at 75k `?wait=true` actions a second that held
    /// the lock long enough to stall answers for up to 0.4 s (p99 ~250 ms on the file backend). Each call now
    /// drops a bounded part: 256 when the timer fires, two per one scheduled.
    @Test func aBacklogOfCancelledDeadlinesIsDroppedAFewAtATime() async throws {
        let timers = DeadlineTimers()
        let ran = Mutex<[String]>([])
        let periodic = ScheduledWork()
        timers.schedule(periodic, at: Self.inMilliseconds(1000)) { ran.withLock { $0.append("periodic") } }
        let timeouts = (0..<2000).map { _ in ScheduledWork() }
        for (index, handle) in timeouts.enumerated() {
            timers.schedule(handle, at: Self.inMilliseconds(60_000 + UInt64(index))) { ran.withLock { $0.append("x") } }
            handle.cancel()
        }
        // Each schedule above found the live periodic entry on top (due in a second): nothing to drop yet.
        #expect(timers.pending == 2001)
        try await eventually("the periodic work to run") { ran.withLock { $0 } == ["periodic"] }
        #expect(timers.pending == 2000 - 256, "one firing drops 256 of the backlog, not all of it")
        let next = ScheduledWork()
        timers.schedule(next, at: Self.inMilliseconds(120_000)) { ran.withLock { $0.append("next") } }
        #expect(timers.pending == 2000 - 256 - 2 + 1, "a schedule drops two and adds one")
        next.cancel()
        #expect(ran.withLock { $0 } == ["periodic"])
    }
}
