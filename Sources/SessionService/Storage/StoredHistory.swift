/// One state record: a reduced mutation, or a state that replaced the state before it (forced in
/// stub mode, or standing in for a mutation too large for a record), producing version `version`.
@usableFromInline
struct StoredState: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case mutation
        case forced
    }

    var kind: Kind
    var version: UInt64
    /// The mutation or the state, as JSON.
    var json: [UInt8]
}

/// A stored session read back: its latest snapshot and what followed it, checked and merged.
@usableFromInline
struct StoredHistory: Sendable {
    var snapshot: StoredSnapshot
    /// State records after the snapshot, versions contiguous from `snapshot.version + 1`.
    var states: [StoredState]
    /// The action log, oldest first: actions whose effects a stop interrupted are marked so.
    var actions: [ActionLogEntry]
    var lastSeq: UInt64
    /// Whether records follow the snapshot (the session cannot leave memory again without a new one).
    var hasTail: Bool
    /// The pending timers: the snapshot's, changed by the timer records after it, less those whose action
    /// was accepted after it (soonest first).
    @usableFromInline var timers: [PendingTimer] = []
    /// The number of the session's latest timer record.
    @usableFromInline var timerSerial: UInt64 = 0
}

/// The records that rebuild one past version: a snapshot's state and the state records after it.
struct StoredVersionHistory: Sendable {
    var base: [UInt8]
    var states: [StoredState]
}

/// A stored session as the admin listing shows it without loading it.
struct StoredSessionInfo: Sendable, Equatable {
    var id: String
    var reactor: String
    var version: UInt64
    /// Whether it is in this process's memory.
    var resident: Bool
    /// Why it cannot be served, when quarantined.
    var unavailable: String?
    /// Tells it from an earlier session with the same id (``StoredSnapshot/incarnation``); 0 when unknown.
    var incarnation: UInt64 = 0
}
