import Dispatch
import Logs
import NATS
import Tokens

// Sessions: the catalog, creating, loading (claim, read back, fence), deleting, quarantine, tokens.
extension NATSStorage {
    var count: Int { catalog.count }

    func contains(_ id: String) -> Bool { catalog.contains(id) }

    func readFailure(_ id: String) -> String? { readFailures.withLock { $0[id] } }

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
        catalog.unavailable(id, meta, crashReason: crashReason)
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

    /// Claims the session, reads its records back, and appends a fence: from then on only this
    /// instance's publishes land on the subject. A session a live instance runs is refused (503).
    func load(_ id: String) -> StorageLoad {
        guard let meta = catalog.known(id) else { return .missing }
        if let reason = unavailable(id, meta) { return .unavailable(reason) }
        if let reason = unavailableReason { return .storageUnavailable(reason) }
        waitForRelease(id)
        if let successor = recentlyHandedOff(id) {
            return transientFailure(id, "it moved to instance \(successor) just now, which runs it")
        }
        let revision: UInt64
        var askedOwner = false
        var goneOwner: String?
        claiming: while true {
            switch claims.take(id, ownerGone: goneOwner, loading: true) {
            case .failed(let error):
                return transientFailure(id, "its claim cannot be read or written: \(error)")
            case .overwritten(let other):
                return transientFailure(
                    id, "instance \(other ?? "(none: the claim is gone)") claimed it at the same moment as this one")
            case .owned(let owner):
                // A live instance runs it: asked once to let it go (it settles, stores and gives its claim up).
                guard !askedOwner else { return transientFailure(id, "instance \(owner) runs it") }
                askedOwner = true
                switch requestHandOff(id, from: owner) {
                case .released:
                    break
                case .refused(let reason), .silent(let reason):
                    return transientFailure(id, "instance \(owner) runs it and did not hand it off: \(reason)")
                case .ownerGone:
                    // Its heartbeat has not expired yet, but nothing of it is on the cluster: taken over
                    // now. Safe even if it is only cut off: whatever it still sends is fenced.
                    goneOwner = owner
                }
            case .taken(let value, let from):
                revision = value
                if let from {
                    // Gone without handing it off: if it crashed on this session, loading it would crash here too.
                    if !releasing.withLock({ $0.contains(id) }), let reason = crashedOwner(id, from) {
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
                } else if askedOwner {
                    logger.info("took a session over from the instance that handed it off", ["session": .string(id)])
                }
                break claiming
            }
        }
        switch readAndFence(id) {
        case .failure(let failure):
            if let rival = failure.rival {
                // The rival's claim was overwritten by this one's (both accepted): it is put back, so the claim
                // names the instance that runs the session, nobody takes it from that one unasked, and that one
                // writes on after this one's fence (``NATSSessionLog``'s refused publishes).
                claims.handOver(id, revision: revision, to: rival)
                return transientFailure(id, failure.error.description)
            }
            giveUpClaim(id, revision: revision)
            return transientFailure(id, "its records cannot be read back: \(failure.error)")
        case .success(let (replay, fenceSequence)):
            _ = readFailures.withLock { $0.removeValue(forKey: id) }
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

    /// A load that may succeed later: noted for the error answers, nothing quarantined.
    func transientFailure(_ id: String, _ reason: String) -> StorageLoad {
        // Logged when it starts or its reason changes, not for every request that meets it.
        let repeated = readFailures.withLock { failures in
            defer { failures[id] = reason }
            return failures[id] == reason
        }
        if !repeated {
            logger.warning(
                "a stored session cannot be loaded now; the next request tries again",
                ["session": .string(id), "reason": .string(reason)])
        }
        return .storageUnavailable(reason)
    }

    /// Waits (bounded) while this instance's previous log of `id` still sends its last records.
    func waitForRelease(_ id: String) {
        guard let previous = logs.withLock({ $0[id] }) else { return }
        let done = DispatchSemaphore(value: 0)
        previous.whenDrained { done.signal() }
        _ = done.wait(timeout: .now() + options.requestTimeout.timeInterval)
    }

    /// Reads the subject back and appends this instance's fence after the last message read; when
    /// another write came in between, reads on from there and tries again.
    func readAndFence(_ id: String) -> Result<(RecordReplay, UInt64), FenceFailure> {
        let subject = names.records(id)
        var replay = RecordReplay(limits: options.actionLogLimits)
        var next: UInt64 = 1
        var fence: [UInt8] = []
        RecordFrame.append(kind: .fence, number: 0, continues: false, body: claims.own.json[...], to: &fence)
        let interference = claims.interference.withLock { $0 }
        for _ in 0..<8 {
            switch readSubject(subject, from: next) {
            case .failure(let error): return .failure(FenceFailure(error: error))
            case .success(let messages):
                for message in messages {
                    if case .failure(let damage) = replay.add(message) {
                        return .success((replay.damaged(damage), next))
                    }
                    next = message.sequence + 1
                }
            }
            interference?.at(id, .subjectRead)
            let expected = interference?.dropsChecks == true ? nil : replay.lastSequence
            let options = PublishOptions(messageID: nextMessageID(), expectedLastSubjectSequence: expected)
            let jetStream = self.jetStream
            switch waitFor(
                "a publish to \(subject)",
                { completion in try jetStream.publish(subject, payload: fence, options: options, completion: completion)
                })
            {
            case .success(let ack):
                interference?.at(id, .fenceAcknowledged)
                if let rival = rivalWrite(on: subject, after: replay.lastSequence, before: ack.sequence) {
                    return .failure(rival)
                }
                return .success((replay, ack.sequence))
            case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence: continue
            case .failure(let error): return .failure(FenceFailure(error: error))
            }
        }
        return .failure(
            FenceFailure(
                error: .invalidResponse(
                    subject: subject, server: connection.serverName,
                    detail: "another instance keeps writing on the session's subject")))
    }

    /// Why a load's fence does not stand: the error, and the instance that fenced the session first when that
    /// is why (``rivalWrite(on:after:before:)``).
    struct FenceFailure: Error {
        var error: NATSError
        var rival: OwnershipClaim?
    }

    /// Why this instance must not run the session it just fenced: a message other than its fence landed on the
    /// subject after the last one it read. nats-server 2.9 can acknowledge two publishes that expect the same last
    /// subject sequence in a clustered stream under load (nats-server#4320), and its key-value compare-and-set with
    /// them, so two instances loading one session at once may both see their claim and fence accepted. The first
    /// message after what was read decides: only the instance whose fence it is runs the session; the other gives
    /// up (503, asked again). Nil when the fence came first, or when that cannot be read (the publish's own check
    /// stands then).
    func rivalWrite(on subject: String, after lastRead: UInt64, before fence: UInt64) -> FenceFailure? {
        let jetStream = self.jetStream
        let stream = names.recordsStream
        let first = waitFor("a read of the first message of \(subject) after \(lastRead)") { completion in
            try jetStream.getMessage(
                stream: stream, .nextBySubject(subject, from: lastRead + 1), completion: completion)
        }
        guard case .success(let message?) = first, message.sequence < fence else { return nil }
        metrics.fencingRejections.increment()
        let rival = fencer(of: message)
        let error = NATSError.invalidResponse(
            subject: subject, server: connection.serverName,
            detail: "another instance (\(rival?.instance ?? "unknown")) fenced the session at the same moment (its "
                + "record at stream sequence \(message.sequence) came before this instance's fence at \(fence)); it "
                + "runs the session")
        return FenceFailure(error: error, rival: rival)
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
        _ = readFailures.withLock { $0.removeValue(forKey: id) }
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
        _ = releasing.withLock { $0.remove(id) }
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
        _ = releasing.withLock { $0.remove(id) }
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
