/// One session's records in a backend, held by the process that runs the session. Its
/// `SessionJournal` appends in order; every append returns at once (the backend buffers it, or has
/// it in flight), and output that shows it waits for ``lastPosition`` to be durable.
///
/// The append methods that return `Bool` return false when the record is larger than the backend
/// holds: nothing was appended.
protocol SessionLog: AnyObject, Sendable {
    /// Why this session's records cannot be appended right now (the storage fails, or another process
    /// took the session over); nil when they can.
    var unavailableReason: String? { get }
    /// The largest action (its canonical JSON) one accept record holds; larger ones are refused.
    var maxActionBytes: Int { get }
    /// The largest state (bytes of JSON) one of its snapshots holds.
    var largestSnapshotState: Int { get }
    /// The position of this session's newest record.
    var lastPosition: UInt64 { get }

    /// An accepted action `seq`; `completed` when every mutation it made was already reduced (no
    /// completion follows); `origin` says who sent it; `timer` names the timer that sent it (this record also
    /// removes that timer).
    func appendAccept(
        seq: UInt64, at: Int64, stubbed: Bool, completed: Bool, origin: ActionOrigin, action: [UInt8], timer: String?)
    /// A change of the session's timers, numbered `serial` (one more than its previous timer record's).
    func appendTimer(_ change: TimerChange, serial: UInt64) -> Bool
    /// The session's soonest pending timer is now `at` (nil: none); see the extension's default.
    func noteSoonestTimer(_ at: Int64?)
    /// The session was just loaded with `at` as its soonest pending timer (nil: none); see the extension's default.
    func noteLoadedTimers(_ at: Int64?)
    /// Every mutation of action `seq` has been reduced.
    func appendCompletion(seq: UInt64)
    /// A reduced mutation (JSON) producing `version`, written by the reactor's `storageVersion`.
    func appendMutation(_ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool
    /// A state (JSON) that replaced the one before as `version`, written by the reactor's `storageVersion`.
    func appendForcedState(_ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool
    /// A snapshot: no record before it is needed to resume the session, but the action log's.
    func appendSnapshot(_ snapshot: StoredSnapshot) -> Bool
    /// The retained action log, so no older accept record is needed: `entries` calls its argument with
    /// every entry, oldest first (a backend streams them, never copying the whole log).
    func appendActionLogCheckpoint(_ entries: ((ActionLogEntry) -> Void) -> Void)
    /// The session leaves this process's memory: its latest snapshot and the records after it
    /// describe it, and another process may take it over.
    func release()
    /// The session loaded from this log's history came back (its reactor replayed it without a fault).
    func didLoad()
    /// Records appended from now until ``releasePublishes()`` go out together (one write for an action's
    /// mutation and its accept); see the extension's default.
    func holdPublishes()
    /// Ends a ``holdPublishes()``: what it held goes out now.
    func releasePublishes()
}

extension SessionLog {
    /// Nothing to note.
    func didLoad() {}
    /// A backend whose appends cost no round trip each (the file journal's buffer) holds nothing.
    func holdPublishes() {}
    /// Nothing was held.
    func releasePublishes() {}
}

extension SessionLog {
    /// The session's soonest pending timer changed (nil: none left); a backend shared by several processes
    /// tells the others, so they fire it should this one be gone by then. The file journal needs nothing.
    func noteSoonestTimer(_ at: Int64?) {}
    /// A backend shared by several processes writes what the new owner knows; the file journal needs nothing.
    func noteLoadedTimers(_ at: Int64?) {}
}
