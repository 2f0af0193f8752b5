import HTTPServer
import JSONCodec
import Logs

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
        if let peers {
            relays.sweep(peers) { [store] in store.isResident($0) }
            // Relays confirmed a second or more ago: one set up since is still on its way to being fed.
            relays.verify(peers, confirmedBefore: now > 1_000_000_000 ? now - 1_000_000_000 : 0)
        }
    }

    /// Answers 200 with `json`, which shows `session` as it is now (read before this call): once its newest records
    /// are durable, or at once 503 when storage cannot store them (``refusedAsUnstored(_:at:_:)``).
    func replyShowing(_ session: any SessionStreamSource, json: [UInt8], _ exchange: Exchange) {
        // Read after what `json` shows, so the position covers the record of the version shown.
        let position = session.storedPosition
        if refusedAsUnstored(session.id, at: position, exchange) { return }
        exchange.dependsOn = position
        exchange.reply(200, json: json)
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
        let message =
            "session \(JSONWriter.quoted(id))'s newest changes are not stored (\(reason)); reads of it "
            + "answer 503 until a retried write stores them"
        return APIError(.storageUnavailable, message)
    }
}

extension ReactorService {
    /// At start, in the background: reads up to `storage.checkAtStart` stored sessions back without loading
    /// them, decodes and migrates their records (no `reduce` runs: see ``StorageCheck/run``), logs per reactor
    /// what `reactor-server verify` would print, and counts those that would not load on `/metrics`
    /// (`reactor_session_load_failures_total`).
    func checkStoredSessions() {
        let limit = configuration.storage.checkAtStart
        guard let storage = store.storage, limit > 0 else { return }
        let metrics = context.metrics
        let check = StorageCheck.run(storage: storage, catalog: catalog, limit: limit, reducing: false) { reactor, id in
            metrics.loadFailures.note(reactor: reactor, session: id)
        }
        guard check.checked > 0 else { return }
        for (name, tally) in check.tallies.sorted(by: { $0.key < $1.key }) {
            var fields: LogFields = [
                "reactor": .string(name), "as_stored": .int(tally.asStored), "migrated": .int(tally.migrated),
                "failed": .int(tally.failed),
            ]
            if !tally.migrations.isEmpty {
                let migrations = tally.migrations.map { "\($0.id): \($0.what)" }
                fields.append("migrations", .string(migrations.joined(separator: "; ")))
            }
            if !tally.failures.isEmpty {
                let reasons = tally.failures.map { "\($0.id): \($0.reason)" }
                fields.append("reasons", .string(reasons.joined(separator: "; ")))
                logger.error(
                    "stored sessions would not load with this server's reactor; they answer 409 session_unavailable",
                    fields)
            } else {
                logger.info("stored sessions load with this server's reactor", fields)
            }
        }
        let checked =
            check.checked < check.stored
            ? "a sample of \(check.checked) of the \(check.stored) stored sessions (storage.checkAtStart; "
                + "reactor-server verify reads them all)"
            : "all \(check.stored) stored sessions"
        logger.notice(
            "checked \(checked) at start",
            [
                "as_stored": .int(check.asStored), "migrated": .int(check.migrated), "failed": .int(check.failed),
            ])
    }
}
