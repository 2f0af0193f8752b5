import Dispatch
import Logs
import NATS

// Upkeep: sessions leaving this instance, taken over, deleted; subjects trimmed behind checkpoints.
extension NATSStorage {
    /// A released log sent its last records: its entry gets the version it reached, and its claim
    /// goes, so any instance may load it at once.
    func released(_ log: NATSSessionLog) {
        let (version, revision, stopped) = log.state.withLock { ($0.version, $0.claimRevision, $0.stop != nil) }
        if !stopped { catalog.raiseVersion(of: log.id, to: version) }
        let current = logs.withLock { logs -> Bool in
            guard logs[log.id] === log else { return false }
            logs.removeValue(forKey: log.id)
            return true
        }
        guard current, !stopped else { return }
        let id = log.id
        DispatchQueue.global().async { [self] in
            if let meta = catalog.meta(id), meta.version < version {
                _ = catalog.update(id) { $0.version = max($0.version, version) }
            }
            // Its last timer time is written first: a later owner's writes then come after it.
            _ = timers.waitUntilWritten(id, limit: options.requestTimeout)
            giveUpReleasedClaim(id, revision: revision)
        }
    }

    /// Gives up the claim a released log held. When its revision is behind (a load that lost to this instance's
    /// put back the claim its own had overwritten), the claim as read goes instead, if it still names this start
    /// of the instance, is not a new load's (`loading`) and no new log of the session is open here.
    func giveUpReleasedClaim(_ id: String, revision: UInt64) {
        let bucket = claims.bucket
        let deletion = waitFor("the deletion of session \(id)'s claim") { completion in
            try bucket.delete(id, revision: revision, completion: completion)
        }
        guard case .failure(let error) = deletion, error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence,
            case .success(let found?) = claims.read(id), found.claim == claims.own, !found.claim.loading,
            logs.withLock({ $0[id] == nil })
        else { return }
        claims.release(id, revision: found.revision)
    }

    /// Records that can never be stored: their positions are resolved as lost, so nothing waits for
    /// them for ever, and output that shows them (it names the session's positions) is refused: an
    /// answer becomes a 503, a stream closes. The rest of this instance goes on.
    func lost(_ positions: [UInt64], shown: Bool, id: String, reason: String) {
        Self.lost(
            positions, shown: shown, id: id, reason: reason, watermark: watermark, metrics: metrics, logger: logger)
    }

    /// ``lost(_:shown:id:reason:)`` with what it needs of the storage (the timer writes call it too).
    static func lost(
        _ positions: [UInt64], shown: Bool, id: String, reason: String, watermark: DurabilityWatermark,
        metrics: NATSStorageMetrics, logger: Logger
    ) {
        let why = "session \(id)'s records can never be stored: \(reason)"
        watermark.markLost(positions, reason: why)
        metrics.lostRecords.increment(by: positions.count)
        if shown {
            logger.warning(
                "records clients may be waiting for can never be stored; "
                    + "what shows them is refused, nothing of it is sent",
                ["session": .string(id), "records": .int(positions.count), "reason": .string(reason)])
        }
    }

    /// Another instance took the session over: this one lets it go, and its subscribers are told. Only when `log`
    /// is the session's current one: an earlier log (the session left memory since and came back with a new one)
    /// that learns late of a take-over says nothing of the copy in memory now, which its own log stands for.
    func movedAway(_ log: NATSSessionLog, reason: String) {
        let current = logs.withLock { logs -> Bool in
            guard logs[log.id] === log else { return false }
            logs.removeValue(forKey: log.id)
            return true
        }
        guard current else {
            logger.info(
                "an earlier log of a session was fenced off; the session in memory here has a newer one",
                ["session": .string(log.id), "reason": .string(reason)])
            return
        }
        logger.warning(
            "a session was taken over by another instance; it leaves this one",
            ["session": .string(log.id), "reason": .string(reason)])
        resident.withLock { $0 }?.sessionMoved(log.id, reason: reason)
    }

    /// Sessions in memory here whose claim names another instance: that one took them over, and an idle copy
    /// here (nothing written since, so no publish was refused to say so) would go on serving its streams a past
    /// version. The claims mirror points at candidates; a consistent read of the claim decides. Each leaves
    /// memory as a session taken over does (its streams get `session_moved` and follow it).
    func dropSessionsClaimedElsewhere(_ resident: any ResidentSessions) {
        for id in resident.residentIDs() {
            guard let mirrored = claims.mirror.holder(of: id), mirrored != options.instance else { continue }
            guard case .success(let found?) = claims.read(id), found.claim != claims.own else { continue }
            let claim = found.claim
            let reason = "instance \(claim.instance) claims the session"
            if let log = logs.withLock({ $0[id] }) {
                log.stop(because: reason, fenced: true)
            } else {
                logger.warning(
                    "a session in memory here is claimed by another instance; it leaves this one",
                    ["session": .string(id), "owner": .string(claim.instance)])
                resident.sessionMoved(id, reason: reason)
            }
        }
    }

    /// A new session's subject holds a deleted session's leftovers: they are purged (up to the last
    /// one seen) and the first publish is sent again.
    func purgeLeftovers(_ log: NATSSessionLog, messageID: String, through sequence: UInt64) {
        logger.notice(
            "a new session's subject held records of a deleted one; purging them", ["session": .string(log.id)])
        do throws(NATSError) {
            try jetStream.purgeStream(names.recordsStream, subject: log.subject, before: sequence + 1) {
                [self] result in
                if case .failure(let error) = result {
                    logger.warning(
                        "cannot purge a deleted session's records yet",
                        ["session": .string(log.id), "error": .string(error.description)])
                }
                log.retry(messageID, after: .cancelled, attempt: 1)
            }
        } catch {
            log.retry(messageID, after: error, attempt: 1)
        }
    }

    // MARK: Trimming

    /// Asks resident sessions whose subjects grew long for a checkpoint (a snapshot and their action
    /// log); once it is acknowledged, what came before it is purged (``trim(_:before:)``).
    func trim(_ resident: any ResidentSessions) {
        let due = logs.withLock { logs in
            logs.values.filter { log in
                log.state.withLock { outbox in
                    guard !outbox.checkpointing, !outbox.releasing, outbox.stop == nil,
                        outbox.messages > options.trimAfterMessages
                    else { return false }
                    outbox.checkpointing = true
                    return true
                }
            }.map(\.id)
        }
        if !due.isEmpty { resident.writeCheckpoints(due) }
    }

    /// Purges the messages of `log`'s subject before `sequence` (its latest checkpoint's snapshot).
    func trim(_ log: NATSSessionLog, before sequence: UInt64) {
        do throws(NATSError) {
            try jetStream.purgeStream(names.recordsStream, subject: log.subject, before: sequence) { [self] result in
                switch result {
                case .success(let purged):
                    log.state.withLock { $0.messages = max(0, $0.messages - Int(purged)) }
                    logger.debug(
                        "trimmed a session's records behind its checkpoint",
                        ["session": .string(log.id), "purged": .int(Int(purged))])
                case .failure(let error):
                    logger.warning(
                        "cannot trim a session's records now",
                        ["session": .string(log.id), "error": .string(error.description)])
                }
            }
        } catch {
            logger.warning(
                "cannot trim a session's records now",
                ["session": .string(log.id), "error": .string(error.description)])
        }
    }

    // MARK: Erasure

    /// Purges a deleted session's records (up to `through`, its last known message, so a session
    /// created again under the id keeps its own) and gives up the claim taken to delete it.
    func erase(_ id: String, through: UInt64?, claimRevision: UInt64?) {
        erasures.withLock { _ = $0.insert(id) }
        let subject = names.records(id)
        let stream = names.recordsStream
        let jetStream = self.jetStream
        let purge: @Sendable (UInt64) -> Void = { [self] last in
            do throws(NATSError) {
                try jetStream.purgeStream(stream, subject: subject, before: last + 1) { [self] result in
                    guard case .success = result else { return }
                    erasures.withLock { _ = $0.remove(id) }
                    if let claimRevision { giveUpClaim(id, revision: claimRevision) }
                }
            } catch {}
        }
        if let through { return purge(through) }
        do throws(NATSError) {
            try jetStream.getMessage(stream: stream, .lastBySubject(subject)) { [self] result in
                switch result {
                case .success(let message?): purge(message.sequence)
                case .success(nil):
                    erasures.withLock { _ = $0.remove(id) }
                    if let claimRevision { giveUpClaim(id, revision: claimRevision) }
                case .failure: break
                }
            }
        } catch {}
    }

    /// Tries again the erasures that failed (JetStream was not reachable), unless the id is in use again.
    func eraseDeletedSessions() {
        let pending = erasures.withLock { $0 }
        for id in pending where !contains(id) && logs.withLock({ $0[id] == nil }) {
            erase(id, through: nil, claimRevision: nil)
        }
    }
}
