import JSONCodec
import Synchronization
import Tokens

/// Every session by id, with the session limit. With storage, sessions not in memory (passivated, or
/// not touched since a restart) are loaded back on their first lookup (rebuilt by their reactor in the
/// catalog), and at most `maxResident` stay in memory (the least recently used leave first).
public final class SessionStore: ResidentSessions {
    private let sessions = Mutex(SessionTable())
    /// Serializes loads, creations and deletions, so a session is never loaded twice.
    private let loading = Mutex<Void>(())
    /// Monotonic time of last activity of sessions that are stored but not resident (idle expiry).
    private let passive = Mutex<[String: UInt64]>([:])
    /// Without storage, the hash of each session's access token (token access mode); with storage, the
    /// backend keeps them with the sessions.
    private let tokenHashes = Mutex<[String: SessionTokenHash]>([:])
    /// Without storage, each session's incarnation (see ``incarnation(of:)``); with storage, the backend
    /// keeps it with the session.
    private let incarnations = Mutex<[String: UInt64]>([:])
    /// The event streams opened with each session's token, ended when it is replaced.
    let revocableStreams = RevocableStreams()
    public let limit: Int
    public let maxResident: Int
    /// Where sessions are stored (the context's); nil in memory-only mode.
    let storage: (any StorageBackend)?
    /// The reactors that rebuild stored sessions.
    let catalog: ReactorCatalog
    let context: SessionContext

    /// A store of at most `limit` sessions, kept in `context.storage` (memory only when it has none).
    init(limit: Int, catalog: ReactorCatalog, context: SessionContext, maxResident: Int = .max) {
        self.limit = limit
        self.catalog = catalog
        self.context = context
        storage = context.storage
        self.maxResident = max(1, maxResident)
    }

    /// Has each resident session among `ids` journal a snapshot and its action log (compaction); a
    /// session not in memory is left alone (its records are copied forward instead).
    func writeCheckpoints(_ ids: [String]) {
        for id in ids {
            loading.withLock { _ in
                guard let session = sessions.withLock({ $0[id] }), !session.isPassivated else { return }
                session.writeCompactionCheckpoint()
            }
        }
    }

    /// Another process took the session over: it leaves memory here without a snapshot (its log is
    /// fenced), and its subscribers are sent to reconnect.
    func sessionMoved(_ id: String, reason: String) {
        let session = sessions.withLock { $0.removeValue(forKey: id) }
        session?.endMoved(reason)
    }

    /// Another process asks for the session: it leaves memory here with a final snapshot (see
    /// ``PersistentSession/handOff(to:)``). Never waits for the loading lock: a load holding it may itself
    /// be waiting on another process's hand-off, so a busy store answers "ask again".
    func handOff(_ id: String, to instance: String) -> HandOffOutcome {
        let outcome = loading.withLockIfAvailable { _ -> HandOffOutcome in
            guard let session = sessions.withLock({ $0[id] }), !session.isPassivated else { return .notResident }
            guard session.handOff(to: instance) else { return .busy("an effect of the session is still running") }
            // Not noted as passive: it runs elsewhere now, and its idle time is that instance's to count.
            sessions.withLock { _ = $0.removeValue(forKey: id) }
            return .left
        }
        return outcome ?? .busy("this instance is loading or passivating a session")
    }

    /// Why a session could not be added.
    public enum InsertError: Error, Sendable {
        case exists
        case full
        /// `make` could not store the new session (storage refused it; the reason is logged where it did).
        case notStored
    }

    /// The session with this id, loading it from storage when it is not resident.
    public func session(_ id: String) -> (any PersistentSession)? {
        // A session leaving memory right now is passed over: under the loading lock it is gone.
        if let session = sessions.withLock({ $0.find(id) }), !session.isPassivated { return session }
        guard let storage else { return nil }
        let loaded = loading.withLock { _ in loadLocked(id, storage) }
        if loaded != nil { enforceResidentLimit(keeping: id) }
        return loaded
    }

    /// The session with this id, loaded from storage when needed; the caller holds `loading`.
    private func loadLocked(_ id: String, _ storage: any StorageBackend) -> (any PersistentSession)? {
        if let session = sessions.withLock({ $0[id] }), !session.isPassivated { return session }
        let history: StoredHistory
        let log: any SessionLog
        switch storage.load(id) {
        case .loaded(let found, let opened): (history, log) = (found, opened)
        case .unavailable:
            if let reactor = storage.storedSession(id)?.reactor {
                context.metrics.loadFailures.note(reactor: reactor, session: id)
            }
            return nil
        case .missing, .storageUnavailable: return nil
        }
        switch restore(id, history, log) {
        case .success(let session):
            log.didLoad()
            sessions.withLock { $0[id] = session }
            _ = passive.withLock { $0.removeValue(forKey: id) }
            return session
        case .failure(let error):
            context.metrics.loadFailures.note(reactor: history.snapshot.reactor, session: id)
            // Only here: its records are intact, and another version of its reactor (a rollback) reads them.
            storage.quarantineHere(id, reason: error.reason)
            log.release()
            context.logger.error(
                "a stored session cannot be loaded by this server's reactor; it is unavailable here until a restart",
                ["session": .string(id), "reactor": .string(history.snapshot.reactor), "reason": .string(error.reason)])
            return nil
        }
    }

    /// Rebuilds a session from its stored history with the reactor it was stored under.
    private func restore(_ id: String, _ history: StoredHistory, _ log: any SessionLog) -> Result<
        any PersistentSession, RestoreError
    > {
        guard let definition = catalog.definition(named: history.snapshot.reactor) else {
            return .failure(
                RestoreError(
                    reason: "its reactor \(JSONWriter.quoted(history.snapshot.reactor)) is not hosted by this server"))
        }
        let journal = SessionJournal(
            log: log, id: id, reactor: definition.name, storageVersion: definition.storageVersion,
            snapshotEvery: context.limits.snapshotEvery, logger: context.logger, changed: history.hasTail,
            params: history.snapshot.params)
        do throws(RestoreError) {
            return .success(try definition.restoreSession(id, context, history, journal))
        } catch {
            return .failure(error)
        }
    }

    /// Runs `body` on the session with this id (loading it) while no passivation can take it out of
    /// memory; nil when there is no such session.
    func withSessionHeld<T>(_ id: String, _ body: (any PersistentSession) throws(SessionError) -> T)
        throws(SessionError) -> T?
    {
        guard let storage else { return try sessions.withLock { $0[id] }.map(body) }
        let result = try loading.withLock { _ throws(SessionError) -> T? in
            guard let session = loadLocked(id, storage) else { return nil }
            return try body(session)
        }
        enforceResidentLimit(keeping: id)
        return result
    }

    /// Why `id` has no session: unavailable when it is quarantined; the storage unavailable or
    /// unreadable when it is stored but could not be loaded (the storage cannot be written or read right
    /// now); unknown only when no session has this id.
    func absence(_ id: String) -> SessionError {
        guard let storage, let info = storage.storedSession(id) else { return .unknown(id: id) }
        if let reason = info.unavailable { return .unavailable(id: id, reason: reason) }
        if let reason = storage.unavailableReason { return .storageUnavailable(reason) }
        return .storageUnreadable(id: id, reason: storage.readFailure(id))
    }

    /// Adds a session built by `make` under `id`, unless the id is taken, the limit is reached or `make` could
    /// not store it (nil).
    /// `make` gets the access token's hash to store with the session (with storage); without storage
    /// the store keeps it in memory and `make` gets nil.
    func insert(
        id: String, accessTokenHash: SessionTokenHash? = nil, _ make: (SessionTokenHash?) -> (any PersistentSession)?
    ) throws(InsertError) -> any PersistentSession {
        let session = try loading.withLock { _ throws(InsertError) -> any PersistentSession in
            try sessions.withLock {
                (sessions: inout SessionTable) throws(InsertError) -> any PersistentSession in
                guard sessions[id] == nil, !(storage?.contains(id) ?? false) else { throw .exists }
                guard (storage?.count ?? sessions.count) < limit else { throw .full }
                guard let session = make(storage == nil ? nil : accessTokenHash) else { throw .notStored }
                sessions[id] = session
                return session
            }
        }
        if storage == nil, let accessTokenHash { tokenHashes.withLock { $0[id] = accessTokenHash } }
        if storage == nil { incarnations.withLock { $0[id] = UInt64.random(in: 1...UInt64.max) } }
        enforceResidentLimit(keeping: id)
        return session
    }

    /// What tells session `id` from an earlier session with the same id that was deleted: drawn when it
    /// was created and kept with it (durably, with storage); 0 when unknown (stored before incarnations
    /// existed) or when no session has this id.
    func incarnation(of id: String) -> UInt64 {
        guard let storage else { return incarnations.withLock { $0[id] } ?? 0 }
        return storage.storedSession(id)?.incarnation ?? 0
    }

    /// With storage, a new session leaves memory at once unless something already runs in it: its
    /// first snapshot is journaled, and it is loaded back on first use, so a session nobody uses costs
    /// only its index entry.
    func settle(_ session: any PersistentSession) {
        guard storage != nil else { return }
        _ = passivate([session])
    }

    /// What removing a session came to.
    public enum Removal {
        /// It was in memory: the caller ends it (outside the store's locks).
        case resident(any PersistentSession)
        /// It was only stored (passivated, quarantined): its stored history is deleted, nothing runs to end.
        case storedOnly
    }

    /// Removes the session; its stored history is deleted. Nil when there is no such session (or storage
    /// refuses to delete it).
    public func remove(_ id: String) -> Removal? {
        _ = tokenHashes.withLock { $0.removeValue(forKey: id) }
        _ = incarnations.withLock { $0.removeValue(forKey: id) }
        return loading.withLock { _ -> Removal? in
            let session = sessions.withLock { $0.removeValue(forKey: id) }
            if let storage, storage.delete(id) {
                _ = passive.withLock { $0.removeValue(forKey: id) }
                return session.map(Removal.resident) ?? .storedOnly
            }
            return session.map(Removal.resident)
        }
    }

    /// Whether the session is in memory here (not passivated).
    func residentIDs() -> [String] {
        sessions.withLock { $0.ids { !$0.isPassivated } }
    }

    func isResident(_ id: String) -> Bool {
        sessions.withLock { $0[id].map { !$0.isPassivated } ?? false }
    }

    /// Whether a session has this id, in memory or stored (without loading it).
    func contains(_ id: String) -> Bool {
        sessions.withLock { $0[id] != nil } || (storage?.contains(id) ?? false)
    }

    /// The hash of the session's capability token; nil when the session has none or does not exist.
    /// With storage it is read from there, without loading the session.
    public func accessTokenHash(for id: String) -> SessionTokenHash? {
        guard let storage else { return tokenHashes.withLock { $0[id] } }
        return storage.accessTokenHash(of: id)
    }

    /// Gives the session a new capability token, replacing any earlier one (stored with the session
    /// when there is storage); false when no session has this id.
    /// The streams opened with the old token end at once (`unauthorized`).
    func replaceAccessTokenHash(_ hash: SessionTokenHash, for id: String) -> Bool {
        let replaced: Bool
        if let storage {
            replaced = storage.replaceAccessTokenHash(hash, of: id)
        } else {
            replaced = tokenHashes.withLock { hashes in
                guard sessions.withLock({ $0[id] != nil }) else { return false }
                hashes[id] = hash
                return true
            }
        }
        if replaced { accessTokenReplaced(id) }
        return replaced
    }

    /// Ends the streams of session `id` opened with a token other than its current one: its token was
    /// replaced, here or (the NATS backend's watcher says so) on another instance.
    /// A session in memory here keeps the timer index itself; for any other the stored time is the one to know.
    func timerChanged(_ id: String, at: Int64?) {
        guard !isResident(id) else { return }
        context.timers.note(id, at: at)
    }

    func accessTokenReplaced(_ id: String) {
        let ended = revocableStreams.revoke(id, current: accessTokenHash(for: id), message: Self.tokenReplacedMessage)
        guard ended > 0 else { return }
        context.metrics.streamsEndedTokenReplaced.increment(by: ended)
        context.logger.notice(
            "ended the streams opened with a replaced token", ["session": .string(id), "streams": .int(ended)])
    }

    /// Why a stream opened with a replaced token ends.
    static let tokenReplacedMessage =
        "the session's token was replaced (POST /admin/sessions/{id}/token); reconnect with the new token"

    /// Sessions stored or resident.
    public var count: Int { storage?.count ?? sessions.withLock { $0.count } }

    /// Sessions in memory.
    public var residentCount: Int { sessions.withLock { $0.count } }

    /// All resident sessions, sorted by id (admin listing).
    public func all() -> [any PersistentSession] {
        sessions.withLock { Array($0.values) }.sorted { $0.id < $1.id }
    }

    /// Removes sessions without subscribers whose last activity is before `cutoff`: returns those that were in
    /// memory (the caller ends them) and how many were only stored (their stored history is deleted here).
    public func removeIdle(before cutoff: UInt64) -> (resident: [any PersistentSession], storedOnly: Int) {
        let idle = sessions.withLock { sessions in
            let idle = sessions.values.filter { $0.lastActive < cutoff && $0.subscriberCount == 0 }
            for session in idle { sessions.removeValue(forKey: session.id) }
            return idle
        }
        tokenHashes.withLock { hashes in
            for session in idle { hashes.removeValue(forKey: session.id) }
        }
        incarnations.withLock { incarnations in
            for session in idle { incarnations.removeValue(forKey: session.id) }
        }
        guard let storage else { return (idle, 0) }
        let expired = passive.withLock { passive in
            // A quarantined session waits for an operator, however long: expiring it would lose what crashed it.
            let expired = passive.filter { $0.value < cutoff && storage.storedSession($0.key)?.unavailable == nil }
                .map(\.key)
            for id in expired { passive.removeValue(forKey: id) }
            return expired
        }
        tokenHashes.withLock { hashes in
            for id in expired { hashes.removeValue(forKey: id) }
        }
        loading.withLock { _ in
            for id in idle.map(\.id) + expired where sessions.withLock({ $0[id] == nil }) {
                storage.delete(id)
            }
        }
        return (idle, expired.count)
    }

    /// Notes stored sessions that are not resident (after a restart) as active `now`, for idle expiry.
    func notePassive(_ ids: [String], at now: UInt64) {
        passive.withLock { passive in
            for id in ids { passive[id] = now }
        }
    }

    /// Moves resident sessions idle since before `cutoff` out of memory (snapshot first); returns how many.
    @discardableResult
    public func passivate(idleBefore cutoff: UInt64) -> Int {
        let candidates = sessions.withLock { sessions in
            sessions.values.filter { $0.lastActive < cutoff && $0.subscriberCount == 0 }
        }
        return passivate(candidates)
    }

    /// Evicts the least recently used resident sessions beyond `maxResident`.
    func enforceResidentLimit(keeping kept: String) {
        guard storage != nil else { return }
        let excess = sessions.withLock { $0.count } - maxResident
        guard excess > 0 else { return }
        // Evict a little more than needed (a tenth of the cap, at most 1,000) so a steady stream of
        // loads does not sort every resident session on every one.
        let target = excess + max(0, min(maxResident / 10, 1000))
        let victims = sessions.withLock { sessions in
            // Never the session the caller is about to use.
            sessions.values.filter { $0.subscriberCount == 0 && $0.id != kept }.sorted { $0.lastActive < $1.lastActive }
                .prefix(target)
        }
        _ = passivate(Array(victims))
    }

    private func passivate(_ candidates: [any PersistentSession]) -> Int {
        var count = 0
        for session in candidates {
            let left = loading.withLock { _ -> Bool in
                guard sessions.withLock({ $0[session.id] }) === session, session.passivate() else { return false }
                sessions.withLock { _ = $0.removeValue(forKey: session.id) }
                passive.withLock { $0[session.id] = session.lastActive }
                return true
            }
            if left { count += 1 }
        }
        return count
    }
}
