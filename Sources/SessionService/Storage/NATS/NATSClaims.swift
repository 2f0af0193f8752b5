import NATS
import Synchronization

/// The NATS backend's ownership claims: which instance runs each session (the bucket `<prefix>-claims`, one
/// ``OwnershipClaim`` per session) and which instances are alive (the bucket `<prefix>-instances`, one
/// heartbeat per live instance, gone `storage.nats.claimTTLSeconds` after its last renewal). A claim whose
/// instance has no heartbeat, or one naming another start of it, is a dead owner's and may be taken over.
/// Every write of a claim is a compare-and-set on the revision read, so of two instances claiming at once one
/// wins and the other reads again; the storage's fences on the records subject do the rest.
final class NATSClaims: Sendable {
    /// What trying to claim a session came to.
    enum Outcome {
        /// This instance holds the claim at `revision`; `from` is the dead owner it was taken from.
        case taken(revision: UInt64, from: OwnershipClaim?)
        /// A live instance runs the session.
        case owned(by: String)
        /// This instance's claim was accepted, but reading it back found another write over it (`by` names the
        /// claim's instance then, nil when the claim is gone): what nats-server#4320 lets happen under load.
        case overwritten(by: String?)
        case failed(NATSError)
    }

    /// This process's claim (and heartbeat): the instance's name and this start's incarnation.
    let own: OwnershipClaim
    let bucket: KeyValue
    let heartbeats: KeyValue
    /// Which instance claims each session, as the claims bucket says (mirrored by ``watcher``; it may lag).
    let mirror = ClaimMirror()
    let watcher: OrderedConsumer
    /// A test's hand in the loads (``LoadInterference``); nil in service.
    let interference = Mutex<LoadInterference?>(nil)
    /// How long one JetStream request may take.
    private let timeout: Duration

    init(jetStream: JetStream, names: NATSStorageNames, own: OwnershipClaim, timeout: Duration) {
        self.own = own
        self.timeout = timeout
        bucket = KeyValue(jetStream: jetStream, bucket: names.claimsBucket)
        heartbeats = KeyValue(jetStream: jetStream, bucket: names.instancesBucket)
        let mirror = self.mirror
        watcher = bucket.watcher { mirror.apply($0) }
    }

    // MARK: Claims

    /// Claims session `id`: at once when nobody claims it or this instance (an earlier start of it included)
    /// does; from another instance only when its heartbeat is gone or belongs to a later start of it, or it is
    /// `ownerGone` (nothing of it answers on the cluster). `loading` marks the claim until the load succeeds
    /// (``NATSStorage/markLoaded(_:)`` clears it; see ``OwnershipClaim/loading``).
    func take(_ id: String, ownerGone: String? = nil, loading: Bool = false) -> Outcome {
        var mine = own
        mine.loading = loading
        let interference = loading ? self.interference.withLock { $0 } : nil
        let checked = interference?.dropsChecks != true
        var lastError = NATSError.timedOut(subject: "claiming session \(id)", server: "", after: timeout)
        for _ in 0..<5 {
            let entry: KeyValueEntry?
            switch consistentEntry(bucket, id) {
            case .failure(let error): return .failed(error)
            case .success(let found): entry = found
            }
            interference?.at(id, .claimRead)
            guard let entry, entry.operation == .put else {
                let creation = wait("the creation of session \(id)'s claim") {
                    checked
                        ? try bucket.create(id, value: mine.json, completion: $0)
                        : try bucket.put(id, value: mine.json, completion: $0)
                }
                switch creation {
                case .success(let revision):
                    interference?.at(id, .claimWritten)
                    return readBack(id, revision: revision, taken: .taken(revision: revision, from: nil))
                case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
                    lastError = error
                case .failure(let error): return .failed(error)
                }
                continue
            }
            let holder = OwnershipClaim(json: entry.value)
            if let holder, holder.instance != own.instance, holder.instance != ownerGone {
                switch isLive(holder) {
                case .failure(let error): return .failed(error)
                case .success(true): return .owned(by: holder.instance)
                case .success(false): break
                }
            }
            let update = wait("an update of session \(id)'s claim") {
                checked
                    ? try bucket.update(id, value: mine.json, revision: entry.revision, completion: $0)
                    : try bucket.put(id, value: mine.json, completion: $0)
            }
            switch update {
            case .success(let revision):
                interference?.at(id, .claimWritten)
                return readBack(
                    id, revision: revision, taken: .taken(revision: revision, from: holder == mine ? nil : holder))
            case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
                lastError = error
            case .failure(let error): return .failed(error)
            }
        }
        return .failed(lastError)
    }

    /// `taken` when session `id`'s claim, read back from the bucket's leader, is this instance's at `revision`.
    /// A compare-and-set alone does not say so on nats-server 2.9: under load in a clustered bucket it can accept
    /// two writes over the same revision (nats-server#4320), and the later one holds the claim.
    private func readBack(_ id: String, revision: UInt64, taken: Outcome) -> Outcome {
        switch read(id) {
        case .success(let found?) where found.claim == own && found.revision == revision:
            return taken
        case .success(let found):
            return .overwritten(by: found?.claim.instance)
        case .failure(let error):
            // Not known to hold: let it go (a claim of a live instance no load uses only delays others).
            release(id, revision: revision)
            return .failed(error)
        }
    }

    /// Claims a session this instance just created (nobody else can know it yet); the claim's revision.
    func create(_ id: String) -> Result<UInt64, NATSError> {
        let claim = own.json
        return wait("a put of session \(id)'s claim") { try bucket.put(id, value: claim, completion: $0) }
    }

    /// Writes this instance's claim of `id` again over `revision` (a renewal after a lapse, or the end of a load's
    /// `loading` mark); fails with `wrongLastSequence` when the claim changed since.
    func renew(_ id: String, revision: UInt64) -> Result<UInt64, NATSError> {
        let claim = own.json
        return wait("the renewal of session \(id)'s claim") {
            try bucket.update(id, value: claim, revision: revision, completion: $0)
        }
    }

    /// Gives a claim up without waiting (best effort: an unused claim of a live instance only delays a take-over).
    func release(_ id: String, revision: UInt64) {
        try? bucket.delete(id, revision: revision) { _ in }
    }

    /// Writes `holder`'s claim over this instance's (at `revision`) and waits: a load that lost to `holder` puts
    /// back the claim its own overwrote. Nothing is written when the claim changed since.
    func handOver(_ id: String, revision: UInt64, to holder: OwnershipClaim) {
        var claim = holder
        claim.loading = false
        let value = claim.json
        _ = wait("the hand-over of session \(id)'s claim to instance \(holder.instance)") {
            try bucket.update(id, value: value, revision: revision, completion: $0)
        }
    }

    /// Deletes this instance's claim on `id`, if it has one, and waits: from then on another instance may claim
    /// the session. Nil once given up (or not this instance's); otherwise why not.
    func giveUp(_ id: String) -> String? {
        for _ in 0..<3 {
            switch read(id) {
            case .failure(let error):
                return "its claim cannot be read: \(error)"
            case .success(let found):
                guard let found, found.claim == own else { return nil }
                let deletion = wait("the deletion of session \(id)'s claim") {
                    try bucket.delete(id, revision: found.revision, completion: $0)
                }
                switch deletion {
                case .success: return nil
                // Changed meanwhile (the released log gave it up first): look again.
                case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence: continue
                case .failure(let error): return "its claim cannot be given up: \(error)"
                }
            }
        }
        return "its claim keeps changing"
    }

    /// Session `id`'s claim and its revision, read from the bucket's leader; nil when nobody claims it.
    func read(_ id: String) -> Result<(claim: OwnershipClaim, revision: UInt64)?, NATSError> {
        consistentEntry(bucket, id).map { entry in
            guard let entry, entry.operation == .put, let claim = OwnershipClaim(json: entry.value) else { return nil }
            return (claim, entry.revision)
        }
    }

    /// The live instance other than this one whose claim holds session `id`; nil when this one holds it,
    /// nobody does, its holder is dead, or that cannot be told now.
    func liveOwner(of id: String) -> String? {
        guard case .success(let found?) = read(id), found.claim.instance != own.instance,
            case .success(true) = isLive(found.claim)
        else { return nil }
        return found.claim.instance
    }

    // MARK: Heartbeats

    /// Whether `holder` is a live claim: its instance's heartbeat is there and names the same start.
    func isLive(_ holder: OwnershipClaim) -> Result<Bool, NATSError> {
        consistentEntry(heartbeats, holder.instance).map { beat in
            guard let beat, beat.operation == .put else { return false }
            return OwnershipClaim(json: beat.value)?.incarnation == holder.incarnation
        }
    }

    /// Whether `instance` has a heartbeat (any start of it); false when that cannot be told now.
    func isAlive(_ instance: String) -> Bool {
        guard case .success(let beat?) = consistentEntry(heartbeats, instance) else { return false }
        return beat.operation == .put
    }

    /// Puts this instance's heartbeat, waiting at most `timeout`.
    func beat(timeout: Duration) -> Result<UInt64, NATSError> {
        let heartbeats = self.heartbeats
        let instance = own.instance
        let beat = OwnershipClaim(instance: own.instance, incarnation: own.incarnation).json
        return Blocking.call(
            "the heartbeat (a put of \(instance) in the bucket \(heartbeats.bucket))", timeout: timeout
        ) {
            try heartbeats.put(instance, value: beat, completion: $0)
        }
    }

    /// Deletes this instance's heartbeat (at shutdown), so its claims are dead ones at once.
    func stopBeating() {
        let instance = own.instance
        _ = wait("the deletion of this instance's heartbeat") { try heartbeats.delete(instance, completion: $0) }
    }

    // MARK: Reading and waiting

    /// The latest entry of `key`, read from the bucket's leader.
    private func consistentEntry(_ bucket: KeyValue, _ key: String) -> Result<KeyValueEntry?, NATSError> {
        wait("a read of \(key) in the bucket \(bucket.bucket)") { try bucket.consistentEntry(key, completion: $0) }
    }

    /// Waits for one JetStream call (the request timeout and a margin); `what` names it in a timeout's error.
    private func wait<T: Sendable>(
        _ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: timeout, start)
    }
}
