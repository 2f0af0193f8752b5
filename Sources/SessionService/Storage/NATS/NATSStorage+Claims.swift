import NATS

// Claims: which instance runs a session, and taking one over from a dead instance.
extension NATSStorage {
    /// What trying to claim a session came to.
    enum ClaimOutcome {
        /// This instance holds the claim at `revision`; `from` is the dead owner it was taken from.
        case taken(revision: UInt64, from: OwnershipClaim?)
        /// A live instance runs the session.
        case owned(by: String)
        case failed(NATSError)
    }

    /// This instance's claim.
    var ownClaim: OwnershipClaim { OwnershipClaim(instance: options.instance, incarnation: incarnation) }

    /// Claims session `id`: at once when nobody claims it or this instance (an earlier start of it
    /// included) does; from another instance only when its heartbeat is gone or belongs to a later
    /// start of it, or it is `ownerGone` (nothing of it answers on the cluster). Every write is a
    /// compare-and-set on the revision read, so of two instances claiming at once one wins and the
    /// other reads again.
    func takeClaim(_ id: String, ownerGone: String? = nil, loading: Bool = false) -> ClaimOutcome {
        var mine = ownClaim
        // Until the load succeeds (``markLoaded(_:)``): see ``OwnershipClaim/loading``.
        mine.loading = loading
        var lastError = NATSError.timedOut(subject: "claiming session \(id)", server: "", after: options.requestTimeout)
        for _ in 0..<5 {
            let current = consistentEntry(claimsBucket, id)
            let entry: KeyValueEntry?
            switch current {
            case .failure(let error): return .failed(error)
            case .success(let found): entry = found
            }
            guard let entry, entry.operation == .put else {
                switch waitFor("the creation of session \(id)'s claim", { completion in try claimsBucket.create(id, value: mine.json, completion: completion) }) {
                case .success(let revision): return .taken(revision: revision, from: nil)
                case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence: lastError = error
                case .failure(let error): return .failed(error)
                }
                continue
            }
            let holder = OwnershipClaim(json: entry.value)
            if let holder, holder.instance != options.instance, holder.instance != ownerGone {
                switch isLive(holder) {
                case .failure(let error): return .failed(error)
                case .success(true): return .owned(by: holder.instance)
                case .success(false): break
                }
            }
            switch waitFor("an update of session \(id)'s claim", { completion in try claimsBucket.update(id, value: mine.json, revision: entry.revision, completion: completion) }) {
            case .success(let revision): return .taken(revision: revision, from: holder == mine ? nil : holder)
            case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence: lastError = error
            case .failure(let error): return .failed(error)
            }
        }
        return .failed(lastError)
    }

    /// Whether `holder` is a live claim: its instance's heartbeat is there and names the same start.
    func isLive(_ holder: OwnershipClaim) -> Result<Bool, NATSError> {
        consistentEntry(instancesBucket, holder.instance).map { beat in
            guard let beat, beat.operation == .put else { return false }
            return OwnershipClaim(json: beat.value)?.incarnation == holder.incarnation
        }
    }

    /// The latest entry of `key`, read from the bucket's leader.
    func consistentEntry(_ bucket: KeyValue, _ key: String) -> Result<KeyValueEntry?, NATSError> {
        waitFor("a read of \(key) in the bucket \(bucket.bucket)") { completion in try bucket.consistentEntry(key, completion: completion) }
    }

    /// Waits for a JetStream call of this backend (its request timeout, and a margin); `what` names
    /// the call in a timeout's error.
    func waitFor<T: Sendable>(_ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: options.requestTimeout, start)
    }
}
