import Dispatch
import Reactors

/// What `SessionStore/stopAtShutdown(grace:within:)` did.
struct ShutdownStop: Sendable, Equatable {
    /// Effect tasks still running when the sessions stopped: each was cancelled, and its action
    /// reads as interrupted after a restart.
    var effectsCutOff: Int
    /// Whether every one of them had ended within the bound.
    var effectsEnded: Bool
}

extension SessionStore {
    /// At shutdown, once the HTTP server has stopped and before storage closes. Effects still running
    /// get what is left of `http.shutdownDeadlineSeconds` (`grace`, on the service's clock) to finish
    /// and journal their actions' completion, as requests did. Then every resident session stops:
    /// the effects still running are cancelled without journaling a completion, and the store waits
    /// up to `bound` for their tasks to end, so that none runs, or writes, after the journal closed.
    ///
    /// An effect that ignores cancellation (it blocks a thread, or awaits something no cancel
    /// reaches) is left behind after `bound`: the process exits around it.
    func stopAtShutdown(grace: Duration, within bound: Duration) -> ShutdownStop {
        if grace > .zero {
            let busy = all().filter { $0.runningEffects > 0 }
            if !busy.isEmpty { _ = waitForEffects(of: busy, until: grace, onClock: true) }
        }
        var cutOff = 0
        var stopped: [any PersistentSession] = []
        for session in all() {
            let running = session.stopAtShutdown()
            if running > 0 {
                cutOff += running
                stopped.append(session)
            }
        }
        guard !stopped.isEmpty else { return ShutdownStop(effectsCutOff: 0, effectsEnded: true) }
        return ShutdownStop(
            effectsCutOff: cutOff, effectsEnded: waitForEffects(of: stopped, until: bound, onClock: false))
    }

    /// Blocks until none of `sessions` runs an effect, or `limit` passed (on the service's clock when
    /// `onClock`, which a test moves by hand, else on the real one); true when they all ended.
    private func waitForEffects(of sessions: [any PersistentSession], until limit: Duration, onClock: Bool) -> Bool {
        let woken = DispatchSemaphore(value: 0)
        // On the effects' own threads: the caller blocks one, and the shared pool may be busy too.
        let waiting = Task(executorPreference: EffectExecutor.shared) {
            await withTaskGroup(of: Void.self) { group in
                for session in sessions { group.addTask { await session.waitForEffects() } }
            }
            woken.signal()
        }
        let timer = onClock ? context.clock.schedule(after: limit) { woken.signal() } : nil
        // A backstop on the real clock too: a clock nobody moves must not hold the process.
        _ = woken.wait(timeout: .now() + (onClock ? limit + .seconds(60) : limit).timeInterval)
        timer?.cancel()
        // Ends the waits of runtimes whose effects outlive the limit (a waiter leaves at cancellation).
        waiting.cancel()
        return sessions.allSatisfy { $0.runningEffects == 0 }
    }
}
