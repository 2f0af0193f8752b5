import NATS

// Crash records on the cluster (``NATSCrashRecords``) as the storage protocol asks for them, and the two places
// where a load meets them: the version a quarantined session reached, and the claim's `loading` mark.
extension NATSStorage {
    var sharesCrashRecords: Bool { true }

    func shareCrashRecords(_ records: [CrashRecord]) -> Bool { crashes.share(records) }

    func sharedCrashRecords(of id: String?) -> [CrashRecord] { crashes.records(of: id) }

    func removeSharedCrashRecords(of id: String) { crashes.remove(of: id) }

    func refreshStoredVersion(of id: String) {
        guard let records = try? records(of: id) else { return }
        let newest = records.filter { $0.kind == .snapshot || $0.kind == .mutation || $0.kind == .forced }.map(\.number)
            .max()
        if let newest { catalog.raiseVersion(of: id, to: newest) }
    }

    /// Says in the session's claim that its load succeeded (the claim said it was loading until now), and
    /// waits for it (bounded): until then, this instance dying, even by `kill -9`, would leave the session
    /// quarantined as one it died loading.
    func markLoaded(_ log: NATSSessionLog) {
        let revision = log.state.withLock { $0.claimRevision }
        switch claims.renew(log.id, revision: revision) {
        case .success(let next):
            log.state.withLock { if $0.claimRevision == revision { $0.claimRevision = next } }
        case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
            // Written since (renewed, put back by a load that lost to this one, or taken over): it no longer says
            // loading. When it is this instance's, its revision is what giving it up and renewing it expect now.
            if case .success(let found?) = claims.read(log.id), found.claim == claims.own {
                log.state.withLock { if $0.claimRevision == revision { $0.claimRevision = found.revision } }
            }
        case .failure(let error):
            logger.warning(
                "a loaded session's claim still says it is loading; if this instance dies before it is renewed, "
                    + "the next one quarantines the session",
                ["session": .string(log.id), "error": .string(error.description)])
        }
    }
}
