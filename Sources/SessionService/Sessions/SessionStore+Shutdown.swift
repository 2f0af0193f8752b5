import Dispatch
import Synchronization

/// What ``SessionStore/stopAtShutdown(within:)`` did.
struct ShutdownStop: Sendable, Equatable {
    /// Effect tasks still running when the sessions stopped: each was cancelled, and its action
    /// reads as interrupted after a restart.
    var effectsCutOff: Int
    /// Whether every one of them had ended within the bound.
    var effectsEnded: Bool
}

extension SessionStore {
    /// At shutdown, once the HTTP server has stopped and before storage closes: stops every resident
    /// session (cancelling the effects that outlived `http.shutdownDeadlineSeconds`, without
    /// journaling their completion) and waits up to `bound` for the cancelled tasks to end, so that
    /// no effect runs, or writes, after the journal has closed.
    ///
    /// An effect that ignores cancellation (it blocks a thread, or awaits something that cannot be
    /// cancelled) is left behind after `bound`: the process exits around it.
    func stopAtShutdown(within bound: Duration) -> ShutdownStop {
        var cutOff = 0
        var stopped: [any HostedSession] = []
        for session in all() {
            let running = session.stopAtShutdown()
            if running > 0 {
                cutOff += running
                stopped.append(session)
            }
        }
        guard !stopped.isEmpty else { return ShutdownStop(effectsCutOff: 0, effectsEnded: true) }
        let ended = DispatchSemaphore(value: 0)
        let sessions = stopped
        let waiting = Task {
            await withTaskGroup(of: Void.self) { group in
                for session in sessions { group.addTask { await session.waitForEffects() } }
            }
            ended.signal()
        }
        let inTime = ended.wait(timeout: .now() + bound.timeInterval) == .success
        // Ends the wait of a runtime whose effects outlive the bound (its waiter leaves at cancellation).
        if !inTime { waiting.cancel() }
        return ShutdownStop(effectsCutOff: cutOff, effectsEnded: inTime)
    }
}
