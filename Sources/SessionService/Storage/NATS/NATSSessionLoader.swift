import Logs
import NATS
import Synchronization

/// Loading a stored session on the NATS backend, up to the point where only this instance writes it: claim it
/// (not one this instance just handed off; asking a live owner to hand it off once, ``NATSHandOffRequests``), read
/// the claim back, read its records, append a fence after the last one read and check that no rival's write came
/// first; and the refusals that follow from fences (a publish refused after a loser's fence, the reason a
/// taken-over session gives). ``NATSStorage`` decides what a load may do before and after: quarantine, crash
/// records, the session's log.
///
/// ```swift
/// guard case .claimed(let revision, _, _) = loader.claim("s1") else { return }
/// if case .fenced(let replay, let fence) = loader.fence("s1", claimRevision: revision) { … }
/// ```
///
/// A test holds a load at each of these steps through ``NATSClaims/interference`` (``LoadInterference``).
final class NATSSessionLoader: Sendable {
    /// What claiming a session came to.
    enum Claim {
        /// This instance holds the claim at `revision`; `from` is the dead owner it was taken from, `handedOff`
        /// whether a live owner let it go when asked.
        case claimed(revision: UInt64, from: OwnershipClaim?, handedOff: Bool)
        /// The session cannot be claimed now (a live owner keeps it, the claim cannot be read); why.
        case refused(String)
    }

    /// What fencing a claimed session's records came to.
    enum Fence {
        /// The records as read, and the stream sequence of this instance's fence after them.
        case fenced(RecordReplay, sequence: UInt64)
        /// The fence does not stand (the claim is given up, or put back to the rival that fenced first); why.
        case refused(String)
    }

    let claims: NATSClaims
    /// Asks owners for their sessions, and remembers those this instance just handed off.
    let handOffs: NATSHandOffRequests
    let reader: NATSSubjectReader
    let messageIDs: NATSMessageIDs
    let names: NATSStorageNames
    let options: NATSStorage.Options
    let metrics: NATSStorageMetrics
    let logger: Logger
    /// Why each session that could not be loaded lately could not (for the error answers); gone once it loads.
    private let failures = Mutex<[String: String]>([:])

    init(
        claims: NATSClaims, reader: NATSSubjectReader, messageIDs: NATSMessageIDs, names: NATSStorageNames,
        options: NATSStorage.Options, metrics: NATSStorageMetrics, logger: Logger
    ) {
        self.claims = claims
        handOffs = NATSHandOffRequests(
            connection: reader.connection, names: names, options: options, metrics: metrics)
        self.reader = reader
        self.messageIDs = messageIDs
        self.names = names
        self.options = options
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: Load failures

    /// Why session `id` could not be loaded lately; nil once it loaded (or never failed).
    func failure(of id: String) -> String? { failures.withLock { $0[id] } }

    /// Forgets why session `id` could not be loaded (it loaded, or it is deleted).
    func forgetFailure(of id: String) {
        _ = failures.withLock { $0.removeValue(forKey: id) }
    }

    /// A load that may succeed later: noted for the error answers, nothing quarantined.
    func transientFailure(_ id: String, _ reason: String) -> StorageLoad {
        // Logged when it starts or its reason changes, not for every request that meets it.
        let repeated = failures.withLock { failures in
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

    // MARK: Claiming

    /// Claims session `id` for a load; a live owner is asked once to let it go (it settles, stores and gives its
    /// claim up), and one that nothing of is left on the cluster is taken over.
    func claim(_ id: String) -> Claim {
        if let successor = handOffs.recentlyHandedOff(id) {
            return .refused("it moved to instance \(successor) just now, which runs it")
        }
        var askedOwner = false
        var goneOwner: String?
        while true {
            switch claims.take(id, ownerGone: goneOwner, loading: true) {
            case .failed(let error):
                return .refused("its claim cannot be read or written: \(error)")
            case .overwritten(let other):
                return .refused(
                    "instance \(other ?? "(none: the claim is gone)") claimed it at the same moment as this one")
            case .owned(let owner):
                // A live instance runs it: asked once to let it go (it settles, stores and gives its claim up).
                guard !askedOwner else { return .refused("instance \(owner) runs it") }
                askedOwner = true
                switch handOffs.request(id, from: owner) {
                case .released:
                    break
                case .refused(let reason), .silent(let reason):
                    return .refused("instance \(owner) runs it and did not hand it off: \(reason)")
                case .ownerGone:
                    // Its heartbeat has not expired yet, but nothing of it is on the cluster: taken over
                    // now. Safe even if it is only cut off: whatever it still sends is fenced.
                    goneOwner = owner
                }
            case .taken(let revision, let from):
                return .claimed(revision: revision, from: from, handedOff: askedOwner)
            }
        }
    }

    // MARK: Fencing

    /// Reads session `id`'s records back and appends this instance's fence after them; when it does not stand,
    /// the claim (at `claimRevision`) is given up, or put back to the rival that fenced first.
    func fence(_ id: String, claimRevision revision: UInt64) -> Fence {
        switch readAndFence(id) {
        case .success(let (replay, sequence)):
            return .fenced(replay, sequence: sequence)
        case .failure(let failure):
            if let rival = failure.rival {
                // The rival's claim was overwritten by this one's (both accepted): it is put back, so the claim
                // names the instance that runs the session, nobody takes it from that one unasked, and that one
                // writes on after this one's fence (``NATSSessionLog``'s refused publishes).
                claims.handOver(id, revision: revision, to: rival)
                return .refused(failure.error.description)
            }
            claims.release(id, revision: revision)
            return .refused("its records cannot be read back: \(failure.error)")
        }
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
            switch reader.messages(on: subject, from: next) {
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
            let options = PublishOptions(messageID: messageIDs.next(), expectedLastSubjectSequence: expected)
            let jetStream = reader.jetStream
            switch wait(
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
                    subject: subject, server: reader.connection.serverName,
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
        let jetStream = reader.jetStream
        let stream = names.recordsStream
        let first = wait("a read of the first message of \(subject) after \(lastRead)") { completion in
            try jetStream.getMessage(
                stream: stream, .nextBySubject(subject, from: lastRead + 1), completion: completion)
        }
        guard case .success(let message?) = first, message.sequence < fence else { return nil }
        metrics.fencingRejections.increment()
        let rival = Self.fencer(of: message)
        let error = NATSError.invalidResponse(
            subject: subject, server: reader.connection.serverName,
            detail: "another instance (\(rival?.instance ?? "unknown")) fenced the session at the same moment (its "
                + "record at stream sequence \(message.sequence) came before this instance's fence at \(fence)); it "
                + "runs the session")
        return FenceFailure(error: error, rival: rival)
    }

    // MARK: Refused publishes

    /// When every message on session `id`'s subject after `sequence` is a fence of another instance's load while
    /// the claim (read from the bucket's leader) still names this start of this instance, the claim's revision:
    /// those were loads that lost to this one's, whose instances put its claim back
    /// (``NATSClaims/handOver(_:revision:to:)``). An instance that took the session over writes its claim before
    /// its fence, so its fence never passes this. Nil otherwise.
    func fencedOnlyByLosers(_ id: String, after sequence: UInt64) -> UInt64? {
        guard case .success(let found?) = claims.read(id), found.claim == claims.own,
            case .success(let messages) = reader.messages(on: names.records(id), from: sequence + 1),
            !messages.isEmpty
        else { return nil }
        let onlyFences = messages.allSatisfy { message in
            guard case .success(let frames) = RecordFrame.frames(of: message.payload),
                frames.allSatisfy({ $0.kind == .fence }), let fencer = Self.fencer(of: message)
            else { return false }
            return fencer != claims.own
        }
        return onlyFences ? found.revision : nil
    }

    /// The claim of the instance whose fence `message` carries; nil when it carries none.
    static func fencer(of message: StoredMessage) -> OwnershipClaim? {
        guard case .success(let frames) = RecordFrame.frames(of: message.payload),
            let fence = frames.last(where: { $0.kind == .fence })
        else { return nil }
        return OwnershipClaim(json: Array(fence.body))
    }

    /// Why a publish was refused, from the subject's last message (a fence names its writer).
    static func takenOverReason(_ message: StoredMessage?) -> String {
        if let claim = message.flatMap(fencer) { return "instance \(claim.instance) took the session over" }
        return "another instance wrote to the session's records"
    }

    /// Waits for one JetStream call (the request timeout and a margin); `what` names it in a timeout's error.
    private func wait<T: Sendable>(
        _ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: options.requestTimeout, start)
    }
}
