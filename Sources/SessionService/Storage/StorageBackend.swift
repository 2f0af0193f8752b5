import Tokens

/// Where sessions are kept durably: the catalog of stored sessions, each session's records and access
/// token, past versions for time travel, and the watermark that output waits for. `FileJournal` is
/// the embedded backend (one append-only journal on the local disk).
///
/// A session reaches its records through a `SessionLog` that ``create(_:accessTokenHash:)`` or
/// ``load(_:)`` hands out; while it holds one, it is the only writer of that session's records. A
/// backend shared by several processes enforces that: `load` takes ownership of the session (a claim
/// with a fencing token), `SessionLog/release()` gives it up, and the appends of an owner whose
/// claim was taken over fail (its log then reports `SessionLog/unavailableReason`) instead of
/// landing after the new owner's.
///
/// Appending never waits: records are buffered or in flight, and numbered by a position that grows
/// by one per record. Output that shows a state waits, without blocking anything, until the position
/// of the records behind it is durable (``isDurable(_:)``, ``whenDurable(_:_:)``).
///
/// ```swift
/// let backend: any StorageBackend = try FileJournal(options: .init(directory: "data"), logger: logger)
/// guard let log = backend.create(snapshot, accessTokenHash: nil) else { return }   // id taken
/// log.appendMutation(json, version: 1, storageVersion: 1)
/// let position = backend.appendedPosition
/// backend.whenDurable(position) { print("version 1 is durable") }
/// ```
protocol StorageBackend: MetricsSource {
    /// Why records cannot be written right now, nil when they can: changes are refused meanwhile
    /// (503), and `/healthz` says so.
    var unavailableReason: String? { get }

    // MARK: The catalog

    /// How many sessions are stored, in memory or not.
    var count: Int { get }
    /// Whether a session with this id is stored.
    func contains(_ id: String) -> Bool
    /// The stored session with this id, without loading it.
    func storedSession(_ id: String) -> StoredSessionInfo?
    /// Every stored session (the admin listing).
    func storedSessions() -> [StoredSessionInfo]
    /// Why the latest attempt to read the stored session `id` failed, while it keeps failing.
    func readFailure(_ id: String) -> String?

    // MARK: Sessions

    /// Stores a new session (created, or forked at the snapshot's version) with its first snapshot and
    /// its access token's hash, and returns its log; nil when the id is taken or it cannot be stored
    /// (logged).
    func create(_ snapshot: StoredSnapshot, accessTokenHash: SessionTokenHash?) -> (any SessionLog)?
    /// Reads a stored session back for this process to run: its history and its log.
    func load(_ id: String) -> StorageLoad
    /// Reads a stored session's history without running it (`verify`, the check at start): no claim is
    /// taken, nothing is written or quarantined; why not, when it cannot be read.
    func peek(_ id: String) -> Result<StoredHistory, StorageReadError>
    /// Quarantines a stored session: every request on it answers `reason` until it is deleted (or, a
    /// crash's quarantine, released).
    func quarantine(_ id: String, reason: String)
    /// Quarantines a stored session in this process only (see the extension's default): this server's
    /// reactor cannot read what is stored, which another version of it may (a rollback, a rolling deploy).
    func quarantineHere(_ id: String, reason: String)
    /// Lets a quarantined session load again (an operator released it after deploying a fixed reactor).
    func liftQuarantine(_ id: String)
    /// The action log of a stored session, read without loading it or running any of its reactor's code
    /// (a quarantined session's is readable too); nil when no session has this id.
    func storedActionLog(of id: String) throws(StorageReadError) -> [ActionLogEntry]?
    /// Deletes a stored session, its records and its token; false when none has this id.
    @discardableResult
    func delete(_ id: String) -> Bool

    // MARK: Access tokens

    /// The hash of the session's access token (`auth.sessions=token`), read without loading the
    /// session; nil when it has none or is not stored.
    func accessTokenHash(of id: String) -> SessionTokenHash?
    /// Replaces the session's access token hash; false when no session has this id.
    func replaceAccessTokenHash(_ hash: SessionTokenHash, of id: String) -> Bool

    // MARK: Past versions

    /// The snapshot and state records that rebuild version `version` of session `id`; nil when it is
    /// older than the retained history.
    func history(of id: String, upTo version: UInt64) throws(StorageReadError) -> StoredVersionHistory?
    /// The oldest version of session `id` that can still be rebuilt.
    func oldestRetainedVersion(of id: String) -> UInt64?

    // MARK: Durability

    /// The position of the newest record appended: output queued now shows nothing newer.
    var appendedPosition: UInt64 { get }
    /// Whether every record up to `position` is durable. A backend whose writes are local and quick
    /// (the file journal's `write(2)`) may make them so before it answers; one that waits on a network
    /// only reports.
    func isDurable(_ position: UInt64) -> Bool
    /// Calls `wake`, on any thread, once every record up to `position` is durable (at once when it
    /// already is). While records cannot be written the backend keeps trying; `wake` waits for that,
    /// though a backend may also call it when writing fails, so output that acknowledges the records
    /// is refused (503) at once instead (the caller asks again, then ``unavailableReason``). `wake`
    /// must not call back into the backend: it may run with the backend's locks held.
    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void)
    /// Whether the record at `position` and every earlier record of its session are durable, whatever other
    /// sessions' records before it (see the extension's default): what output showing one session waits for.
    func isDurableExactly(_ position: UInt64) -> Bool
    /// Calls `wake` once ``isDurableExactly(_:)`` holds for `position` (as ``whenDurable(_:_:)`` otherwise).
    func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void)
    /// Whether records may be lost (see the extension's default): a backend shared by several
    /// processes loses those an owner appended after another process took their session over.
    var losesPositions: Bool { get }
    /// Why the record at `position` can never be stored, nil when it is durable or on its way. The
    /// watermark passes a lost position (other sessions' output goes on), so output that shows a
    /// session's records names that session's position and is refused when it is lost.
    func lossReason(_ position: UInt64) -> String?

    // MARK: Crash records

    /// Whether crash records are kept with the sessions for every instance sharing them (see the
    /// extension's default); a backend only this process uses leaves them in the crash folder.
    var sharesCrashRecords: Bool { get }
    /// Stores crash records this process's crash folder holds where every instance sees them; true once
    /// stored (the files may then go).
    func shareCrashRecords(_ records: [CrashRecord]) -> Bool
    /// The crash records stored with the sessions (every instance's), of session `id` or (nil) of all.
    func sharedCrashRecords(of id: String?) -> [CrashRecord]
    /// Deletes the stored crash records of session `id` (released or deleted).
    func removeSharedCrashRecords(of id: String)
    /// Brings the catalog's version of session `id` up to its newest stored record, where the catalog may
    /// lag (a session whose instance died): a quarantined session's listing, forks and time travel need it.
    func refreshStoredVersion(of id: String)

    // MARK: Upkeep

    /// When each stored session's soonest pending timer may fall due (start-up: the timer index is built from
    /// it). A time may be early, never late: a session loaded at it finds what is really due.
    func timerHints() -> [(id: String, at: Int64)]
    /// Hands the backend the sessions in memory (see the extension's default).
    func attach(_ resident: any ResidentSessions)
    /// Whether loading or creating a session waits on network round trips (see the extension's
    /// default): the service then does it on a worker thread, never on an event loop.
    var waitsOnNetwork: Bool { get }
    // `/metrics`: the backend's own families (``MetricsSource``; see the extension's default).

    /// Periodic work (erasing deleted sessions, compacting, trimming old records). `resident` writes
    /// fresh snapshots and action-log checkpoints of sessions in memory when the backend needs them.
    func maintain(_ resident: any ResidentSessions)
    /// Writes out and syncs everything, and lets go of the storage (at shutdown).
    func close()
}

extension StorageBackend {
    /// The crash folder holds them: only this process serves its sessions.
    var sharesCrashRecords: Bool { false }

    /// Nothing to share with.
    func shareCrashRecords(_ records: [CrashRecord]) -> Bool { false }

    /// None besides the crash folder's.
    func sharedCrashRecords(of id: String?) -> [CrashRecord] { [] }

    /// None besides the crash folder's.
    func removeSharedCrashRecords(of id: String) {}

    /// The catalog is the journal's index: never behind.
    func refreshStoredVersion(of id: String) {}

    /// A backend only this process writes stores every record or fails as a whole.
    var losesPositions: Bool { false }

    /// A backend that stores records in the order they come (one journal) knows no more than its watermark.
    func isDurableExactly(_ position: UInt64) -> Bool { isDurable(position) }

    /// Woken with the watermark.
    func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        whenDurable(position, wake)
    }

    /// Never lost.
    func lossReason(_ position: UInt64) -> String? { nil }

    /// No timers stored.
    func timerHints() -> [(id: String, at: Int64)] { [] }

    /// The file journal's quarantine is this process's already: a restart reads the session again.
    func quarantineHere(_ id: String, reason: String) { quarantine(id, reason: reason) }

    /// A local backend's loads read a file: quick enough to do where the request is.
    var waitsOnNetwork: Bool { false }

    /// Hands the backend the sessions in memory, before any is loaded: a backend shared by several
    /// processes tells them when another process took one over. The file journal has no use for it.
    func attach(_ resident: any ResidentSessions) {}

    /// Adds the backend's own metrics to `/metrics`.
    func renderMetrics(into text: inout PrometheusText) {}
}

/// The sessions in memory, as storage upkeep may need them.
protocol ResidentSessions: Sendable {
    /// Has each resident session among `ids` store a snapshot and its retained action log now, so no
    /// older record of it is needed; sessions not in memory are left alone.
    func writeCheckpoints(_ ids: [String])
    /// Another process took session `id` over (its log can no longer be written): it leaves memory
    /// here without writing anything, and its subscribers get `event: error` with code
    /// `session_moved`, so they reconnect to wherever it runs now.
    func sessionMoved(_ id: String, reason: String)
    /// Another process asks to run session `id`: it journals a final snapshot and leaves memory here,
    /// its subscribers get `event: error` with code `session_moved`. Storage then gives up the claim.
    func handOff(_ id: String, to instance: String) -> HandOffOutcome
    /// Another process replaced session `id`'s access token: the streams opened here with the old one end.
    func accessTokenReplaced(_ id: String)
    /// Storage says session `id`'s soonest timer is now due at `at` (nil: none), as some instance wrote it.
    func timerChanged(_ id: String, at: Int64?)
    /// The ids of the sessions in memory (not leaving it).
    func residentIDs() -> [String]
}

extension ResidentSessions {
    /// Nothing to end (no sessions in memory to tell).
    func sessionMoved(_ id: String, reason: String) {}
    /// Nothing in memory to hand off.
    func handOff(_ id: String, to instance: String) -> HandOffOutcome { .notResident }
    /// No streams to end.
    func accessTokenReplaced(_ id: String) {}
    /// No timers to fire.
    func timerChanged(_ id: String, at: Int64?) {}
    /// None.
    func residentIDs() -> [String] { [] }
}

/// What asking the sessions in memory to hand one off came to.
enum HandOffOutcome: Sendable, Equatable {
    /// It journaled its final snapshot and left memory; its log sends its last records.
    case left
    /// It is not in memory here (never loaded, already gone).
    case notResident
    /// It must stay a moment (an effect is running, a load or passivation holds the store): ask again.
    case busy(String)
}
