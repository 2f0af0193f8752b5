import HTTPServer
import JSONCodec

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
        if let peers = storage.peers { relays.sweep(peers) { [store] in store.isResident($0) } }
    }

    /// `GET /admin/sessions/{id}/versions/{version}`: the state at a past version, replayed from the
    /// nearest snapshot at or below it.
    func adminVersion(_ id: String, _ exchange: Exchange) {
        guard let storage = store.storage else {
            return exchange.fail(APIError(status: 409, code: "memory_only", message: "time travel needs the journal; this server runs with storage.memoryOnly"))
        }
        let segments = exchange.request.pathSegments
        guard segments.count == 5, let version = UInt64(segments[4]) else {
            return exchange.fail(APIError(status: 400, code: "invalid_version", message: "the version must be a non-negative integer, got \(JSONWriter.quoted(exchange.request.pathSegments.last ?? ""))"))
        }
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
        guard let info = storage.storedSession(id) else { return .failure(APIError(store.absence(id))) }
        if let refusal = quarantineRefusal(id, info, version: version) { return .failure(refusal) }
        guard version <= info.version else {
            return .failure(APIError(status: 404, code: "unknown_version", message: "session \(JSONWriter.quoted(id)) is at version \(info.version); version \(version) does not exist yet"))
        }
        guard let definition = catalog.definition(named: info.reactor) else {
            return .failure(APIError(status: 409, code: "session_unavailable", message: "reactor \(JSONWriter.quoted(info.reactor)) is not hosted by this server"))
        }
        let history: StoredVersionHistory
        do {
            guard let found = try storage.history(of: id, upTo: version) else {
                return .failure(APIError(status: 410, code: "version_gone", message: "version \(version) of session \(JSONWriter.quoted(id)) is older than its retained history (compaction keeps the latest snapshot and what follows it); the oldest retained version is \(storage.oldestRetainedVersion(of: id).map(String.init) ?? "unknown")"))
            }
            history = found
        } catch {
            return .failure(APIError(.storageUnreadable(id: id, reason: error.reason)))
        }
        do throws(RestoreError) {
            return .success(try definition.replay(id, history.base, history.states, shown))
        } catch {
            return .failure(APIError(status: 409, code: "session_unavailable", message: "session \(JSONWriter.quoted(id)) cannot be replayed: \(error.reason)"))
        }
    }

    /// `POST /admin/sessions/{id}/fork` `{"version": V, "id": "optional"}` → 201, a new session whose
    /// history starts at the source's state of version V (its version is V).
    func adminFork(_ id: String, _ exchange: Exchange) {
        guard let storage = store.storage else {
            return exchange.fail(APIError(status: 409, code: "memory_only", message: "forking needs the journal; this server runs with storage.memoryOnly"))
        }
        guard let body = exchange.jsonObject(parsingWith: bodyParser) else { return }
        guard case .number(let number)? = body["version"], let version = number.uint64Value else {
            return exchange.fail(APIError(status: 422, code: "invalid_request", message: #"the body must name a version: {"version": 3, "id": "optional-new-id"}"#))
        }
        let newID: String
        switch body["id"] {
        case nil, .null?: newID = SessionID.random()
        case .string(let chosen)? where SessionID.isValid(chosen): newID = chosen
        default:
            return exchange.fail(APIError(status: 400, code: "invalid_id", message: "a session id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -"))
        }
        if let reason = storage.unavailableReason { return exchange.fail(.storageUnavailable(reason)) }
        guard let info = storage.storedSession(id) else { return exchange.fail(store.absence(id)) }
        let state: [UInt8]
        switch stateJSON(id, at: version, storage: storage, shown: false) {
        case .success(let json): state = json
        case .failure(let error): return exchange.fail(error)
        }
        // A fork is a new session: what it starts from must fit the limit its own states will be held to.
        let limit = configuration.sessions.maxStateBytes
        guard state.count <= limit else {
            return exchange.fail(APIError(status: 422, code: "state_too_large", message: "the state of version \(version) is \(state.count) bytes of JSON, over the limit of \(limit) bytes (sessions.maxStateBytes); a fork cannot start from it"))
        }
        guard let definition = catalog.definition(named: info.reactor) else { return exchange.fail(store.absence(id)) }
        let snapshot = StoredSnapshot(id: newID, reactor: info.reactor, version: version, lastSeq: 0, stub: false, state: state)
        let token = newToken()
        let session: any HostedSession
        do {
            session = try store.insert(id: newID, accessTokenHash: token?.hash) { accessTokenHash in
                guard let log = storage.create(snapshot, accessTokenHash: accessTokenHash) else { return StoredOnlySession(id: newID) }
                let journal = SessionJournal(log: log, id: newID, reactor: info.reactor, snapshotEvery: context.limits.snapshotEvery, logger: logger)
                let history = StoredHistory(snapshot: snapshot, states: [], actions: [], lastSeq: 0, hasTail: false)
                return (try? definition.restoreSession(newID, context, history, journal)) ?? StoredOnlySession(id: newID)
            }
        } catch .exists {
            return exchange.fail(APIError(status: 409, code: "session_exists", message: "a session with id \(JSONWriter.quoted(newID)) already exists"))
        } catch {
            return exchange.fail(APIError(status: 503, code: "too_many_sessions", message: "the server holds its limit of \(store.limit) sessions (sessions.limit)"))
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
