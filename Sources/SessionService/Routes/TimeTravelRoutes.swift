import HTTPServer
import JSONCodec

// Time travel: a session's state at a past version, and a new session forked from one.
extension ReactorService {
    /// `GET /admin/sessions/{id}/versions/{version}`: the state at a past version, replayed from the
    /// nearest snapshot at or below it.
    func adminVersion(_ exchange: Exchange) {
        let id = exchange.id
        // Another instance runs it: that one knows its latest version without reading the records back.
        if forwardToOwner(id, exchange, orElse: { self.answerVersion(id, exchange) }) { return }
        answerVersion(id, exchange)
    }

    /// `GET …/versions/{version}` answered from the records this instance can read.
    func answerVersion(_ id: String, _ exchange: Exchange) {
        guard let storage = store.storage else {
            return exchange.fail(
                APIError(
                    .memoryOnly, "time travel needs the journal; this server runs with storage.memoryOnly"))
        }
        let segments = exchange.request.pathSegments
        guard segments.count == 5, let version = UInt64(segments[4]) else {
            return exchange.fail(
                APIError(
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
    func stateJSON(_ id: String, at version: UInt64, storage: any StorageBackend, shown: Bool = true) -> Result<
        [UInt8], APIError
    > {
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
        let shared = peers != nil
        guard version <= info.version || shared else { return .failure(notYet) }
        guard let definition = catalog.definition(named: info.reactor) else {
            return .failure(
                APIError(
                    .sessionUnavailable, "reactor \(JSONWriter.quoted(info.reactor)) is not hosted by this server"))
        }
        let history: StoredVersionHistory
        do {
            guard let found = try storage.history(of: id, upTo: version) else {
                if version > info.version {
                    return .failure(
                        APIError(
                            .unknownVersion,
                            "version \(version) of session \(JSONWriter.quoted(id)) is not in its stored records; "
                                + "it does not exist yet"))
                }
                // A version not rebuilt while writes fail may be one whose records wait to be written.
                if let reason = storage.unavailableReason { return .failure(APIError(.storageUnavailable(reason))) }
                let oldest = storage.oldestRetainedVersion(of: id).map(String.init) ?? "unknown"
                let message =
                    "version \(version) of session \(JSONWriter.quoted(id)) is older than its retained "
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
            return .failure(
                APIError(
                    .sessionUnavailable, "session \(JSONWriter.quoted(id)) cannot be replayed: \(error.reason)"))
        }
    }

    /// `POST /admin/sessions/{id}/fork` `{"version": V, "id": "optional"}` → 201, a new session whose
    /// history starts at the source's state of version V (its version is V).
    func adminFork(_ exchange: Exchange) {
        let id = exchange.id
        // Forked where the source runs, which has every version it has shown.
        if forwardToOwner(id, exchange, orElse: { self.forkHere(id, exchange) }) { return }
        forkHere(id, exchange)
    }

    /// `POST …/fork` on this instance, from the records it can read.
    func forkHere(_ id: String, _ exchange: Exchange) {
        guard let storage = store.storage else {
            return exchange.fail(
                APIError(
                    .memoryOnly, "forking needs the journal; this server runs with storage.memoryOnly"))
        }
        guard let body = exchange.jsonObject(parsingWith: bodyParser) else { return }
        guard case .number(let number)? = body["version"], let version = number.uint64Value else {
            return exchange.fail(
                APIError(
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
            return exchange.fail(
                APIError(
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
        let session: any PersistentSession
        do {
            session = try store.insert(id: newID, accessTokenHash: token?.hash) { accessTokenHash in
                guard let log = storage.create(snapshot, accessTokenHash: accessTokenHash) else { return nil }
                let journal = SessionJournal(
                    log: log, id: newID, reactor: info.reactor, storageVersion: definition.storageVersion,
                    snapshotEvery: context.limits.snapshotEvery, logger: logger, params: params)
                let history = StoredHistory(snapshot: snapshot, states: [], actions: [], lastSeq: 0, hasTail: false)
                return try? definition.restoreSession(newID, context, history, journal)
            }
        } catch .exists {
            return exchange.fail(
                APIError(
                    .sessionExists, "a session with id \(JSONWriter.quoted(newID)) already exists"))
        } catch .notStored {
            return exchange.fail(
                .storageUnavailable(
                    storage.unavailableReason ?? "the fork could not be stored or started; the server's log says why"))
        } catch {
            return exchange.fail(
                APIError(
                    .tooManySessions, "the server holds its limit of \(store.limit) sessions (sessions.limit)"))
        }
        metrics.sessions.increment()
        logger.notice(
            "forked a session", ["from": .string(id), "version": .int(Int(version)), "session": .string(newID)])
        let created = session.snapshot()
        store.settle(session)
        exchange.dependsOn = session.storedPosition
        exchange.reply(
            201, json: Self.sessionJSON(session, created, token: token), headers: [("Location", "/sessions/\(newID)")])
    }
}
