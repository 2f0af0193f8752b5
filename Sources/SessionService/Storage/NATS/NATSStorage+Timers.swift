import NATS

// Timers in the cluster (``NATSTimerWrites``), as the storage protocol and the session logs ask for them.
extension NATSStorage {
    /// The sessions whose entry names a pending timer (start-up), with when it falls due.
    func timerHints() -> [(id: String, at: Int64)] { catalog.timerHints() }

    /// Whether writing `at` as session `id`'s soonest timer tells the other instances of a sooner one.
    func timerIsSooner(_ id: String, at: Int64?) -> Bool { timers.isSooner(id, at: at) }

    /// Session `id`'s soonest timer is now `at` (nil: none), written in the background.
    func noteTimer(_ id: String, at: Int64?, position: UInt64? = nil) { timers.note(id, at: at, position: position) }

    /// Session `id` was just loaded here with `at` as its soonest timer.
    func noteLoadedTimers(_ id: String, at: Int64?) { timers.noteLoaded(id, at: at) }

    /// Whether a timer write of session `id` waits or runs.
    func timerWritesPending(_ id: String) -> Bool { timers.pending(id) }
}
