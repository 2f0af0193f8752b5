import Logs
import NATS
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The NATS backend's sessions bucket (`<prefix>-sessions`, one ``SessionMeta`` per session) and this instance's
/// mirror of it, which a watcher keeps current with every instance's writes and this instance's own writes update
/// at once; with the quarantine marks of this instance alone (``quarantineHere(_:reason:)``). Every write of an
/// entry is a compare-and-set on the revision read (a create for a new session), so concurrent writers read again.
///
/// ```swift
/// let catalog = NATSSessionCatalog(jetStream: jetStream, names: names, timeout: .seconds(5))
/// guard catalog.follow(waiting: .seconds(30), logger: logger) else { return }
/// _ = catalog.update("s1") { $0.version = 12 }
/// ```
final class NATSSessionCatalog: Sendable {
    let bucket: KeyValue
    /// Every session stored, as the bucket says (mirrored by ``watcher``).
    private let mirror = CatalogMirror()
    private let watcher: OrderedConsumer
    /// Sessions this instance's reactor cannot read (a newer or older version of it stored them), and why: kept
    /// apart from the mirror, which every write of the session's entry replaces, so that none of them makes this
    /// instance try (claim, fence, fail) again; other instances and a restart of this one read them as usual.
    private let quarantinedHere = Mutex<[String: String]>([:])
    /// How long one JetStream request may take.
    private let timeout: Duration

    init(jetStream: JetStream, names: NATSStorageNames, timeout: Duration) {
        self.timeout = timeout
        bucket = KeyValue(jetStream: jetStream, bucket: names.sessionsBucket)
        let mirror = self.mirror
        watcher = bucket.watcher { mirror.apply($0) }
    }

    // MARK: The mirror

    /// Starts the watcher and waits (at most `wait`, logging every few seconds) until it has read the bucket;
    /// false when it has not by then.
    func follow(waiting wait: Duration, logger: Logger) -> Bool {
        watcher.startAndWaitUntilCaughtUp(within: wait) {
            logger.warning("reading the sessions bucket: not done yet", ["bucket": .string(bucket.bucket)])
        }
    }

    /// Stops the watcher (at shutdown, or when start-up fails).
    func stop() { watcher.stop() }

    /// How many sessions are stored.
    var count: Int { mirror.withLock { $0.count } }

    func contains(_ id: String) -> Bool { mirror.withLock { $0[id] != nil } }

    /// Session `id`'s entry as the mirror knows it; nil when it is not stored (or not heard of yet).
    func meta(_ id: String) -> SessionMeta? { mirror.withLock { $0[id] } }

    /// Every stored session's entry.
    func metas() -> [(id: String, meta: SessionMeta)] {
        mirror.withLock { catalog in catalog.entries.compactMap { id, entry in entry.meta.map { (id, $0) } } }
    }

    /// Session `id`'s entry: from the mirror, or (when the mirror has not seen it yet) from the bucket.
    func known(_ id: String) -> SessionMeta? {
        if let meta = meta(id) { return meta }
        guard case .success(let entry?) = consistentEntry(id), entry.operation == .put else { return nil }
        let meta =
            SessionMeta(json: entry.value)
            ?? SessionMeta(reactor: "", version: 0, unavailable: "its entry in the sessions bucket is not readable")
        mirror.withLock { _ = $0.apply(id, meta, revision: entry.revision) }
        return meta
    }

    /// Raises session `id`'s version in the mirror to one this instance saw it reach, at once (the bucket's
    /// update, if any, follows).
    func raiseVersion(of id: String, to version: UInt64) {
        mirror.withLock { $0.raiseVersion(of: id, to: version) }
    }

    /// The sessions whose entry names a pending timer, with when it falls due (quarantined ones left out).
    func timerHints() -> [(id: String, at: Int64)] {
        mirror.withLock { catalog in
            catalog.entries.compactMap { id, entry in
                guard let meta = entry.meta, meta.unavailable == nil, let at = meta.timer else { return nil }
                return (id, at)
            }
        }
    }

    /// Sets what is told of access tokens and timer times the watcher saw changed (by any instance).
    func onChanges(token: @escaping @Sendable (String) -> Void, timer: @escaping @Sendable (String, Int64?) -> Void) {
        mirror.onTokenReplaced(token)
        mirror.onTimerChanged(timer)
    }

    // MARK: Quarantine marks

    /// Why session `id` must not be loaded here: its entry's quarantine, `crashReason`, or this instance's
    /// reactor failing to read it; nil when it may load.
    func unavailable(_ id: String, _ meta: SessionMeta, crashReason: (String) -> String?) -> String? {
        meta.unavailable ?? crashReason(id) ?? quarantinedHere.withLock { $0[id] }
    }

    /// Why session `id` is quarantined by its entry or here; nil when neither says so.
    func quarantineReason(_ id: String, _ meta: SessionMeta) -> String? {
        meta.unavailable ?? quarantinedHere.withLock { $0[id] }
    }

    /// Marks session `id` unavailable in the mirror at once (its next request here is refused with this reason,
    /// not an older mark's); the version the mirror knows, which the entry's write that follows keeps.
    func markUnavailable(_ id: String, reason: String) -> UInt64 {
        mirror.withLock { catalog in
            guard var meta = catalog[id] else { return 0 }
            meta.unavailable = reason
            catalog.apply(id, meta, revision: catalog.revision(of: id) + 1)
            return meta.version
        }
    }

    /// Marks session `id` unavailable in this instance's mirror only: other instances (running another version of
    /// its reactor) and a restart of this one read it again.
    func quarantineHere(_ id: String, reason: String) {
        quarantinedHere.withLock { $0[id] = reason }
    }

    /// Lifts both marks of session `id` in this instance's mirror (the entry's write follows).
    func clearMarks(_ id: String) {
        _ = quarantinedHere.withLock { $0.removeValue(forKey: id) }
        mirror.withLock { catalog in
            guard var meta = catalog[id], meta.unavailable != nil else { return }
            meta.unavailable = nil
            catalog.apply(id, meta, revision: catalog.revision(of: id) + 1)
        }
    }

    // MARK: Writing

    /// Writes a new session's entry: fails (`wrongLastSequence`) when the id is taken, on any instance.
    func create(_ id: String, _ meta: SessionMeta) -> Result<UInt64, NATSError> {
        let bucket = self.bucket
        let created = wait("the creation of session \(id)") { try bucket.create(id, value: meta.json, completion: $0) }
        if case .success(let revision) = created { mirror.withLock { _ = $0.apply(id, meta, revision: revision) } }
        return created
    }

    /// Deletes session `id`'s entry without waiting (a creation that could not go on).
    func removeLater(_ id: String) {
        try? bucket.delete(id) { _ in }
    }

    /// Deletes session `id`'s entry and waits: every instance stops seeing the session.
    func delete(_ id: String) -> Result<UInt64, NATSError> {
        let bucket = self.bucket
        let deleted = wait("the deletion of session \(id)") { try bucket.delete(id, completion: $0) }
        if case .success(let revision) = deleted {
            mirror.withLock { _ = $0.apply(id, nil, revision: revision) }
            _ = quarantinedHere.withLock { $0.removeValue(forKey: id) }
        }
        return deleted
    }

    /// Changes session `id`'s entry with a compare-and-set on its revision (read again on a conflict); the entry
    /// as written, nil when the session has none or `proceed` (asked after each read) says no.
    func update(
        _ id: String, what: String = "entry", proceed: () -> Result<Bool, NATSError> = { .success(true) },
        _ change: (inout SessionMeta) -> Void
    ) -> Result<SessionMeta?, NATSError> {
        var lastError = NATSError.timedOut(subject: "updating session \(id)", server: "", after: timeout)
        let bucket = self.bucket
        for _ in 0..<5 {
            let entry: KeyValueEntry
            switch consistentEntry(id) {
            case .failure(let error): return .failure(error)
            case .success(let found?) where found.operation == .put: entry = found
            case .success: return .success(nil)
            }
            guard var meta = SessionMeta(json: entry.value) else { return .success(nil) }
            switch proceed() {
            case .failure(let error): return .failure(error)
            case .success(false): return .success(nil)
            case .success(true): break
            }
            change(&meta)
            let written = meta
            switch wait(
                "an update of session \(id)'s \(what)",
                { try bucket.update(id, value: written.json, revision: entry.revision, completion: $0) })
            {
            case .success(let revision):
                mirror.withLock { _ = $0.apply(id, written, revision: revision) }
                return .success(written)
            case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
                lastError = error
            case .failure(let error):
                return .failure(error)
            }
        }
        return .failure(lastError)
    }

    // MARK: Reading and waiting

    /// The latest entry of `key`, read from the bucket's leader.
    private func consistentEntry(_ key: String) -> Result<KeyValueEntry?, NATSError> {
        let bucket = self.bucket
        return wait("a read of \(key) in the bucket \(bucket.bucket)") {
            try bucket.consistentEntry(key, completion: $0)
        }
    }

    /// Waits for one JetStream call (the request timeout and a margin); `what` names it in a timeout's error.
    private func wait<T: Sendable>(
        _ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: timeout, start)
    }
}
