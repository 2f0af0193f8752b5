import HTTPServer
import JSONCodec

// Persistence in the service: restoring sessions, passivation, compaction, reads held for durability.
extension ReactorService {
    /// Notes the sessions storage holds at start (not in memory yet) for idle expiry and the metrics.
    func noteStoredSessions() {
        guard let storage = store.storage else { return }
        let stored = storage.storedSessions()
        store.notePassive(stored.map(\.id), at: context.clock.monotonicNanoseconds())
        metrics.sessions.increment(by: stored.count)
    }

    /// Periodic storage work: passivate idle sessions, write due snapshots, erase deleted sessions'
    /// records, compact old segments.
    func maintainStorage() {
        guard let storage = store.storage else { return }
        let after = configuration.sessions.passivateAfterSeconds
        let now = context.clock.monotonicNanoseconds()
        if after > 0, now > UInt64(after * 1e9) {
            let count = store.passivate(idleBefore: now - UInt64(after * 1e9))
            if count > 0 { logger.debug("passivated idle sessions", ["count": .int(count)]) }
        }
        for session in store.all() where session.isSnapshotDue { session.writeSnapshot() }
        storage.maintain(store)
        crashes.refreshGauge()
        if let peers = storage.peers {
            relays.sweep(peers) { [store] in store.isResident($0) }
            // Relays confirmed a second or more ago: one set up since is still on its way to being fed.
            relays.verify(peers, confirmedBefore: now > 1_000_000_000 ? now - 1_000_000_000 : 0)
        }
    }

    /// While storage cannot store records, a read showing session `id` up to `position` (its newest
    /// records) that are not stored answers `503 storage_unavailable` at once and returns true: held
    /// for durability, it would wait for a write that may never succeed. False when it may be answered.
    func refusedAsUnstored(_ id: String, at position: UInt64, _ exchange: Exchange) -> Bool {
        guard let error = unstored(id, at: position) else { return false }
        exchange.dependsOn = 0
        exchange.fail(error)
        return true
    }

    /// Why a read of session `id` up to `position` cannot be answered now: its records there are not
    /// stored and storage cannot store records. Nil when they are stored, or on their way.
    func unstored(_ id: String, at position: UInt64) -> APIError? {
        // Asked first: the file journal writes what is buffered right here, and fails if it cannot.
        guard let storage = store.storage, !storage.isDurable(position), let reason = storage.unavailableReason else {
            return nil
        }
        let message = "session \(JSONWriter.quoted(id))'s newest changes are not stored (\(reason)); reads of it "
            + "answer 503 until a retried write stores them"
        return APIError(.storageUnavailable, message)
    }
}
