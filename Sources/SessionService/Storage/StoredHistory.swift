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
    /// The reactor's `Reactor.storageVersion` that wrote it.
    var storageVersion = 1
}

// A state record's payload is its JSON as it is when version 1 of its reactor wrote it (and in every record
// written before versions existed); a later version puts a marker byte and the version (u32) first. JSON
// never begins with that byte, so the two cannot be confused.
extension StoredState {
    /// The byte before the storage version of a record written by a version above 1.
    static let versionMarker: UInt8 = 0x01
    /// Bytes the marker and version take.
    static let versionBytes = 5

    /// Appends a record's payload: `json`, after the marker and version when `storageVersion` is not 1.
    static func appendPayload(_ json: [UInt8], storageVersion: Int, into buffer: inout [UInt8]) {
        if storageVersion != 1 {
            buffer.append(versionMarker)
            buffer.appendLittleEndian(UInt32(truncatingIfNeeded: storageVersion))
        }
        buffer.append(contentsOf: json)
    }

    /// The record read back from its payload.
    init(kind: Kind, version: UInt64, payload: [UInt8]) {
        self.kind = kind
        self.version = version
        guard payload.count >= Self.versionBytes, payload[0] == Self.versionMarker else {
            json = payload
            return
        }
        storageVersion = Int(payload.withUnsafeBytes { $0.loadLittleEndian(UInt32.self, at: 1) })
        json = Array(payload[Self.versionBytes...])
    }
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

    /// The session's parameters (JSON; empty for none), as its snapshot carries them.
    @usableFromInline var params: [UInt8] { snapshot.params }
    /// The pending timers: the snapshot's, changed by the timer records after it, less those whose action
    /// was accepted after it (soonest first).
    @usableFromInline var timers: [PendingTimer] = []
    /// The number of the session's latest timer record.
    @usableFromInline var timerSerial: UInt64 = 0
}

/// The records that rebuild one past version: a snapshot's state and the state records after it.
@usableFromInline
struct StoredVersionHistory: Sendable {
    var base: [UInt8]
    var states: [StoredState]
    /// The session's parameters (``StoredSnapshot/params``), which a fork keeps.
    @usableFromInline var params: [UInt8] = []
    /// The storage version of the reactor that wrote `base`.
    var baseStorageVersion = 1
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
