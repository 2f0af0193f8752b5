/// Where a reactor's own code runs when its session takes an action or an effect's mutation: ReactorKit's
/// `scheduler` for a server. Either way a session runs one item at a time, in the order they were admitted,
/// and every version follows the one before; only the thread differs.
///
/// ```swift
/// struct ReportReactor: Reactor {
///     var scheduler: ReactorScheduler { .workers }   // reduce takes ~20 ms: keep it off the event loops
///     …
/// }
/// ```
public enum ReactorScheduler: Sendable, Equatable {
    /// On the thread that sends the action (for HTTP, the event loop that read the request), as soon as the
    /// session is idle. The fastest for the common reduce of microseconds; a reduce of milliseconds delays every
    /// connection of that loop by as much.
    case inline
    /// On ``ReactorScheduler/workerPool``, threads that are never an event loop: the request is answered and the
    /// loop moves on while the reactor works. Costs a task hand-off per idle admission (a few microseconds). The
    /// pool's threads yield to every ordinary thread (`SCHED_IDLE`), so the reactor gets the CPU the loops leave.
    case workers
}
