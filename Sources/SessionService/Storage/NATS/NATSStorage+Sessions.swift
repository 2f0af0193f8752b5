import Dispatch
import Logs
import NATS
import Tokens

// Sessions: the catalog, creating, loading (what may load, and the log of one loaded), deleting, quarantine, tokens.
extension NATSStorage {
    var count: Int { catalog.count }

    func contains(_ id: String) -> Bool { catalog.contains(id) }

    func readFailure(_ id: String) -> String? { loader.failure(of: id) }

    func storedSession(_ id: String) -> StoredSessionInfo? {
        guard let meta = catalog.meta(id) else { return nil }
        return info(id, meta, log: logs.withLock { $0[id] })
    }

    func storedSessions() -> [StoredSessionInfo] {
        let (metas, open) = (catalog.metas(), logs.withLock { $0 })
        return metas.map { id, meta in info(id, meta, log: open[id]) }
    }

    /// A session as the admin listing shows it: resident when this instance runs it, at the version
    /// its log reached then.
    func info(_ id: String, _ meta: SessionMeta, log: NATSSessionLog?) -> StoredSessionInfo {
        let running = log.flatMap { log in log.state.withLock { $0.releasing || $0.stop != nil ? nil : $0.version } }
        return StoredSessionInfo(
            id: id, reactor: meta.reactor, version: max(running ?? 0, meta.version), resident: running != nil,
            unavailable: unavailable(id, meta), incarnation: meta.incarnation)
    }

    /// Why session `id` must not be loaded here: its entry's quarantine, a crash record naming it, or this
    /// instance's reactor failing to read it; nil when it may load.
    func unavailable(_ id: String, _ meta: SessionMeta) -> String? {
        catalog.unavailable(id, meta, crashReason: crashes.reason)
    }

    // MARK: Creating

    /// Writes the session's entry (a create: it fails when the id is taken, on any instance), claims
    /// it, and sends its first snapshot; the log is returned at once, the snapshot on its way.
    func create(_ snapshot: StoredSnapshot, accessTokenHash: SessionTokenHash?) -> (any SessionLog)? {
        let id = snapshot.id
        if let reason = unavailableReason {
            logger.error("a session cannot be stored now", ["session": .string(id), "reason": .string(reason)])
            return nil
        }
        var meta = SessionMeta(reactor: snapshot.reactor, version: snapshot.version, tokenHash: accessTokenHash)
        meta.incarnation = UInt64.random(in: 1...UInt64.max)
        switch catalog.create(id, meta) {
        case .success:
            break
        case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
            return nil
        case .failure(let error):
            logger.error(
                "a session's entry cannot be written to the sessions bucket",
                ["session": .string(id), "error": .string(error.description)])
            return nil
        }
        let revision: UInt64
        switch claims.create(id) {
        case .success(let value):
            revision = value
        case .failure(let error):
            logger.error(
                "a new session cannot be claimed; it is not stored",
                ["session": .string(id), "error": .string(error.description)])
            catalog.removeLater(id)
            return nil
        }
        let log = NATSSessionLog(
            storage: self, id: id, reactor: snapshot.reactor, lastSequence: 0, claimRevision: revision,
            version: snapshot.version, messages: 0, fresh: true)
        logs.withLock { $0[id] = log }
        _ = log.appendSnapshot(snapshot)
        return log
    }

    // MARK: Loading

    /// Claims the session, reads its records back, and appends a fence (``NATSSessionLoader``): from then on only
    /// this instance's publishes land on the subject. A session a live instance runs is refused (503).
    func load(_ id: String) -> StorageLoad {
        guard let meta = catalog.known(id) else { return .missing }
        if let reason = unavailable(id, meta) { return .unavailable(reason) }
        if let reason = unavailableReason { return .storageUnavailable(reason) }
        waitForRelease(id)
        let revision: UInt64
        switch loader.claim(id) {
        case .refused(let reason):
            return loader.transientFailure(id, reason)
        case .claimed(let value, let from?, _):
            revision = value
            // Gone without handing it off: if it crashed on this session, loading it would crash here too.
            if !crashes.isReleasing(id), let reason = crashes.crashedOwner(id, from) {
                refreshStoredVersion(of: id)
                quarantine(id, reason: reason)
                logger.critical(
                    "a session is quarantined: the instance that ran it died of it",
                    ["session": .string(id), "reason": .string(reason)])
                giveUpClaim(id, revision: revision)
                return .unavailable(reason)
            }
            metrics.takeovers.increment()
            logger.notice(
                "took a session over from an instance that is gone",
                ["session": .string(id), "from": .string(from.instance)])
        case .claimed(let value, nil, let handedOff):
            revision = value
            if handedOff {
                logger.info("took a session over from the instance that handed it off", ["session": .string(id)])
            }
        }
        switch loader.fence(id, claimRevision: revision) {
        case .refused(let reason):
            return loader.transientFailure(id, reason)
        case .fenced(let replay, let fenceSequence):
            loader.forgetFailure(of: id)
            switch replay.history() {
            case .failure(let failure):
                quarantine(id, reason: failure.reason)
                logger.error(
                    "a stored session is quarantined", ["session": .string(id), "reason": .string(failure.reason)])
                giveUpClaim(id, revision: revision)
                return .unavailable(failure.reason)
            case .success(let history):
                let version = history.snapshot.version + UInt64(history.states.count)
                let log = NATSSessionLog(
                    storage: self, id: id, reactor: history.snapshot.reactor, lastSequence: fenceSequence,
                    claimRevision: revision, version: version,
                    messages: replay.messages + 1, fresh: false)
                logs.withLock { $0[id] = log }
                return .loaded(history, log)
            }
        }
    }

    /// Waits (bounded) while this instance's previous log of `id` still sends its last records.
    func waitForRelease(_ id: String) {
        guard let previous = logs.withLock({ $0[id] }) else { return }
        let done = DispatchSemaphore(value: 0)
        previous.whenDrained { done.signal() }
        _ = done.wait(timeout: .now() + options.requestTimeout.timeInterval)
    }

    /// Gives a claim up (best effort: an unused claim of a live instance only delays a take-over).
    func giveUpClaim(_ id: String, revision: UInt64) {
        claims.release(id, revision: revision)
    }

    // MARK: Deleting

    /// Deletes the session's entry (everyone stops seeing it), then purges its records once its log
    /// has sent what it had. A session a live instance runs is left alone (false).
    func delete(_ id: String) -> Bool {
        guard catalog.known(id) != nil else { return false }
        var claimRevision: UInt64?
        let open = logs.withLock { $0[id] }
        if open == nil {
            switch claims.take(id) {
            case .taken(let revision, _): claimRevision = revision
            case .owned(let owner), .overwritten(by: let owner?):
                logger.warning(
                    "a session runs on another instance and is not deleted here",
                    ["session": .string(id), "instance": .string(owner)])
                return false
            case .overwritten(by: nil):
                logger.warning(
                    "a session is not deleted now: its claim was gone right after this instance wrote it; ask again",
                    ["session": .string(id)])
                return false
            case .failed(let error):
                logger.error(
                    "a session cannot be deleted now: its claim cannot be read",
                    ["session": .string(id), "error": .string(error.description)])
                return false
            }
        }
        if case .failure(let error) = catalog.delete(id) {
            logger.error(
                "a session's entry cannot be deleted from the sessions bucket",
                ["session": .string(id), "error": .string(error.description)])
            return false
        }
        loader.forgetFailure(of: id)
        if let open {
            open.whenDrained { [self] in
                let (last, revision) = open.state.withLock { ($0.lastSequence, $0.claimRevision) }
                logs.withLock { if $0[id] === open { $0.removeValue(forKey: id) } }
                erase(id, through: last, claimRevision: revision)
            }
        } else {
            erase(id, through: nil, claimRevision: claimRevision)
        }
        return true
    }

    func quarantine(_ id: String, reason: String) {
        crashes.endRelease(id)
        // This instance's mirror says so at once; the entry's write, which the other instances see, follows, with
        // the version the mirror knows: the entry's is as of the last release, behind when an instance died.
        let version = catalog.markUnavailable(id, reason: reason)
        DispatchQueue.global().async { [self] in
            _ = catalog.update(id) { meta in
                meta.unavailable = reason
                meta.version = max(meta.version, version)
            }
        }
    }

    /// Marks the session unavailable in this instance's mirror of the sessions bucket only: other instances
    /// (running another version of its reactor) and a restart of this one read it again.
    func quarantineHere(_ id: String, reason: String) {
        crashes.endRelease(id)
        catalog.quarantineHere(id, reason: reason)
    }

    // MARK: Access tokens

    func accessTokenHash(of id: String) -> SessionTokenHash? {
        catalog.meta(id)?.tokenHash
    }

    func replaceAccessTokenHash(_ hash: SessionTokenHash, of id: String) -> Bool {
        switch catalog.update(id, { $0.tokenHash = hash }) {
        case .success(let meta): return meta != nil
        case .failure(let error):
            logger.error(
                "a session's access token cannot be replaced now",
                ["session": .string(id), "error": .string(error.description)])
            return false
        }
    }
}
