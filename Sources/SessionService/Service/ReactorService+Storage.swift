import HTTPServer
import JSONCodec
import Logs

// Persistence in the service: restoring sessions, passivation, compaction, time travel.
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

    /// `GET /admin/sessions/{id}/versions/{version}`: the state at a past version, replayed from the
    /// nearest snapshot at or below it.
    func adminVersion(_ id: String, _ exchange: Exchange) {
        // Another instance runs it: that one knows its latest version without reading the records back.
        if forwardToOwner(id, exchange, orElse: { self.answerVersion(id, exchange) }) { return }
        answerVersion(id, exchange)
    }

    /// `GET …/versions/{version}` answered from the records this instance can read.
    func answerVersion(_ id: String, _ exchange: Exchange) {
        guard let storage = store.storage else {
            return exchange.fail(APIError(
                .memoryOnly, "time travel needs the journal; this server runs with storage.memoryOnly"))
        }
        let segments = exchange.request.pathSegments
        guard segments.count == 5, let version = UInt64(segments[4]) else {
            return exchange.fail(APIError(
                .invalidVersion,
                "the version must be a non-negative integer, got "
                    + "\(JSONWriter.quoted(exchange.request.pathSegments.last ?? ""))"))
        }
        // Replayed from what the files hold: while storage fails it shows nothing that waits for a write.
        if storage.unavailableReason != nil { exchange.dependsOn = 0 }
        switch stateJSON(id, at: version, storage: storage) {
        case .success(let state):
            var out = JSONWriter(capacity: 64 + state.count)
            out.raw("{\"id\":")
            out.string(id)
            out.raw(",")
            out.snapshotMembers(EncodedSnapshot(version: version, state: state))
            out.raw("}")
            exchange.reply(200, json: out.bytes)
        case .failure(let error):
            exchange.fail(error)
        }
    }

    /// The state of session `id` at `version`, as clients would have seen it.
    func stateJSON(_ id: String, at version: UInt64, storage: any StorageBackend, shown: Bool = true) -> Result<[UInt8], APIError> {
        stateAndParams(id, at: version, storage: storage, shown: shown).map(\.state)
    }

    /// The state of session `id` at `version` (`shown`: as clients saw it, else the reducer's own) and the
    /// session's parameters (JSON, empty for none), which a fork keeps.
    func stateAndParams(
        _ id: String, at version: UInt64, storage: any StorageBackend, shown: Bool
    ) -> Result<(state: [UInt8], params: [UInt8]), APIError> {
        guard let info = storage.storedSession(id) else { return .failure(APIError(store.absence(id))) }
        if let refusal = quarantineRefusal(id, info, version: version) { return .failure(refusal) }
        let notYet = APIError(
            .unknownVersion,
            "session \(JSONWriter.quoted(id)) is at version \(info.version); version \(version) does not exist yet")
        // On storage shared by instances the catalog's version of a session another instance ran may lag
        // behind its records (it is brought up to date when the session leaves that instance): the
        // records decide.
        let shared = storage.peers != nil
        guard version <= info.version || shared else { return .failure(notYet) }
        guard let definition = catalog.definition(named: info.reactor) else {
            return .failure(APIError(
                .sessionUnavailable, "reactor \(JSONWriter.quoted(info.reactor)) is not hosted by this server"))
        }
        let history: StoredVersionHistory
        do {
            guard let found = try storage.history(of: id, upTo: version) else {
                if version > info.version {
                    return .failure(APIError(
                        .unknownVersion,
                        "version \(version) of session \(JSONWriter.quoted(id)) is not in its stored records; it does "
                            + "not exist yet"))
                }
                // A version not rebuilt while writes fail may be one whose records wait to be written.
                if let reason = storage.unavailableReason { return .failure(APIError(.storageUnavailable(reason))) }
                let oldest = storage.oldestRetainedVersion(of: id).map(String.init) ?? "unknown"
                let message = "version \(version) of session \(JSONWriter.quoted(id)) is older than its retained "
                    + "history (storage keeps the newest \(configuration.storage.historyVersions) versions of each "
                    + "session, storage.historyVersions, and older ones until compaction drops them); the oldest "
                    + "retained version is \(oldest)"
                return .failure(APIError(.versionGone, message))
            }
            history = found
        } catch {
            return .failure(APIError(.storageUnreadable(id: id, reason: error.reason)))
        }
        do throws(RestoreError) {
            let state = try definition.replay(id, history, shown)
            return .success((state, history.params))
        } catch {
            return .failure(APIError(
                .sessionUnavailable, "session \(JSONWriter.quoted(id)) cannot be replayed: \(error.reason)"))
        }
    }

    /// `POST /admin/sessions/{id}/fork` `{"version": V, "id": "optional"}` → 201, a new session whose
    /// history starts at the source's state of version V (its version is V).
    func adminFork(_ id: String, _ exchange: Exchange) {
        // Forked where the source runs, which has every version it has shown.
        if forwardToOwner(id, exchange, orElse: { self.forkHere(id, exchange) }) { return }
        forkHere(id, exchange)
    }

    /// `POST …/fork` on this instance, from the records it can read.
    func forkHere(_ id: String, _ exchange: Exchange) {
        guard let storage = store.storage else {
            return exchange.fail(APIError(
                .memoryOnly, "forking needs the journal; this server runs with storage.memoryOnly"))
        }
        guard let body = exchange.jsonObject(parsingWith: bodyParser) else { return }
        guard case .number(let number)? = body["version"], let version = number.uint64Value else {
            return exchange.fail(APIError(
                .invalidBodyMember,
                #"the body must name a version: {"version": 3, "id": "optional-new-id"}"#))
        }
        let newID: String
        switch body["id"] {
        case nil, .null?: newID = SessionID.random()
        case .string(let chosen)? where SessionID.isValid(chosen): newID = chosen
        default:
            return exchange.fail(APIError(.invalidID, "a session id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -"))
        }
        if let reason = storage.unavailableReason { return exchange.fail(.storageUnavailable(reason)) }
        guard let info = storage.storedSession(id) else { return exchange.fail(store.absence(id)) }
        let state: [UInt8]
        let params: [UInt8]
        switch stateAndParams(id, at: version, storage: storage, shown: false) {
        case .success(let found): (state, params) = found
        case .failure(let error): return exchange.fail(error)
        }
        // A fork is a new session: what it starts from must fit the limit its own states will be held to.
        let limit = configuration.sessions.maxStateBytes
        guard state.count <= limit else {
            return exchange.fail(APIError(
                .stateTooLarge,
                "the state of version \(version) is \(state.count) bytes of JSON, over the limit of \(limit) bytes "
                    + "(sessions.maxStateBytes); a fork cannot start from it"))
        }
        guard let definition = catalog.definition(named: info.reactor) else { return exchange.fail(store.absence(id)) }
        // The fork keeps the source's parameters: it is the same session from here on, under another id. Replayed
        // with today's reactor, its state is in the current storage version.
        let snapshot = StoredSnapshot(
            id: newID, reactor: info.reactor, version: version, lastSeq: 0, stub: false, state: state, params: params,
            storageVersion: definition.storageVersion)
        let token = newToken()
        let session: any HostedSession
        do {
            session = try store.insert(id: newID, accessTokenHash: token?.hash) { accessTokenHash in
                guard let log = storage.create(snapshot, accessTokenHash: accessTokenHash) else { return StoredOnlySession(id: newID) }
                let journal = SessionJournal(
                    log: log, id: newID, reactor: info.reactor, storageVersion: definition.storageVersion,
                    snapshotEvery: context.limits.snapshotEvery, logger: logger, params: params)
                let history = StoredHistory(snapshot: snapshot, states: [], actions: [], lastSeq: 0, hasTail: false)
                return (try? definition.restoreSession(newID, context, history, journal)) ?? StoredOnlySession(id: newID)
            }
        } catch .exists {
            return exchange.fail(APIError(
                .sessionExists, "a session with id \(JSONWriter.quoted(newID)) already exists"))
        } catch {
            return exchange.fail(APIError(
                .tooManySessions, "the server holds its limit of \(store.limit) sessions (sessions.limit)"))
        }
        metrics.sessions.increment()
        logger.notice("forked a session", ["from": .string(id), "version": .int(Int(version)), "session": .string(newID)])
        let created = session.snapshot()
        store.settle(session)
        exchange.dependsOn = session.storedPosition
        exchange.reply(201, json: Self.sessionJSON(session, created, token: token), headers: [("Location", "/sessions/\(newID)")])
    }
}

extension ReactorService {
    /// Admin listing entries of stored sessions that are not in memory: passivated, or quarantined.
    func storedSessionsJSON(_ out: inout JSONWriter, first: Bool, skipping listed: Set<String> = []) {
        guard let storage = store.storage else { return }
        var first = first
        for info in storage.storedSessions().sorted(by: { $0.id < $1.id }) where (!info.resident || info.unavailable != nil) && !listed.contains(info.id) {
            if !first { out.raw(",") }
            first = false
            out.raw("{\"id\":")
            out.string(info.id)
            out.raw(",\"reactor\":")
            out.string(info.reactor)
            out.raw(",\"version\":")
            out.integer(info.version)
            out.raw(",\"subscribers\":0,\"stub\":false,\"resident\":false")
            if let reason = info.unavailable {
                out.raw(",\"unavailable\":")
                out.string(reason)
                crashJSON(info.id, storedVersion: info.version, into: &out)
            }
            out.raw("}")
        }
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
        let checked = check.checked < check.stored
            ? "a sample of \(check.checked) of the \(check.stored) stored sessions (storage.checkAtStart; "
                + "reactor-server verify reads them all)"
            : "all \(check.stored) stored sessions"
        logger.notice("checked \(checked) at start", [
            "as_stored": .int(check.asStored), "migrated": .int(check.migrated), "failed": .int(check.failed),
        ])
    }
}
