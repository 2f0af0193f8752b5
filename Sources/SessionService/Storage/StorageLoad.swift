/// What loading a stored session found.
enum StorageLoad: Sendable {
    /// No session has this id.
    case missing
    /// It is quarantined: every request on it answers why until it is deleted.
    case unavailable(String)
    /// The storage cannot be read or written right now (it may pass); nothing was quarantined.
    case storageUnavailable(String)
    /// Its history, and its log, open for this process's appends.
    case loaded(StoredHistory, any SessionLog)
}

/// Why a stored session cannot be brought back (its session is then quarantined).
@usableFromInline
struct RestoreError: Error, Sendable, CustomStringConvertible {
    @usableFromInline var reason: String
    @usableFromInline var description: String { reason }

    @usableFromInline init(reason: String) { self.reason = reason }
}

/// Why the storage could not be read.
struct StorageReadError: Error, Sendable, CustomStringConvertible {
    var reason: String
    /// Whether the session is simply not stored (any more): deleted, not damaged.
    var isGone = false
    var description: String { reason }

    /// A session that is not stored, e.g. deleted after it was listed.
    static let gone = StorageReadError(reason: "it is no longer stored", isGone: true)
}
