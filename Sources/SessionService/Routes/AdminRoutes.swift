import HTTPServer
import JSONCodec
import Logs
import Tokens

extension ReactorService {
    /// `GET /admin/sessions`: every session with version, stub flag and its subscribers' delivery state.
    /// Instances sharing a storage list every instance's sessions (`"instance"` names where each
    /// resident one runs); `?scope=local` lists only those resident here.
    func adminSessions(_ exchange: Exchange) {
        let scope: String?
        do {
            scope = try exchange.soleQueryValue("scope")
        } catch {
            return exchange.fail(error)
        }
        if let scope, scope != "local" {
            return exchange.fail(
                APIError(
                    .invalidQuery,
                    "scope must be local (only this instance's sessions) or left out, got \(JSONWriter.quoted(scope))"))
        }
        let local = scope != nil
        guard !local, !exchange.isForwarded, let peers else {
            return replySessions(exchange, remote: [], remoteIDs: [], unreachable: [], includeStored: !local)
        }
        gatherRemoteSessions(peers) { [self] entries, ids, unreachable in
            replySessions(exchange, remote: entries, remoteIDs: ids, unreachable: unreachable, includeStored: true)
        }
    }

    /// The session list: the resident sessions, `remote` entries from other instances, then (with
    /// `includeStored`) stored sessions resident nowhere that answered.
    func replySessions(
        _ exchange: Exchange, remote: [[UInt8]], remoteIDs: Set<String>, unreachable: [String], includeStored: Bool
    ) {
        let instance = peers?.instanceName
        // While storage cannot store records, the listing must not wait for them: each session whose
        // newest changes are not stored is marked instead.
        let failing = store.storage?.unavailableReason != nil
        var out = JSONWriter(capacity: 4096)
        out.raw("{\"sessions\":[")
        let resident = store.all()
        for (index, session) in resident.enumerated() {
            if index > 0 { out.raw(",") }
            let subscribers = session.subscriberInfo()
            out.raw("{\"id\":")
            out.string(session.id)
            out.raw(",\"reactor\":")
            out.string(session.reactorName)
            out.raw(",\"version\":")
            out.integer(session.snapshot().version)
            out.raw(",\"subscribers\":")
            out.integer(subscribers.count)
            out.raw(",\"stub\":")
            out.bool(session.isStubEnabled)
            if failing, let unstored = unstored(session.id, at: session.storedPosition) {
                out.raw(",\"unavailable\":")
                out.string(unstored.message)
            }
            if let instance {
                out.raw(",\"instance\":")
                out.string(instance)
            }
            out.raw(",\"idleSeconds\":")
            out.integer(
                (context.clock.monotonicNanoseconds() &- min(session.lastActive, context.clock.monotonicNanoseconds()))
                    / 1_000_000_000)
            out.raw(",\"subscriberDetails\":[")
            for (position, subscriber) in subscribers.enumerated() {
                if position > 0 { out.raw(",") }
                out.raw("{\"queuedBytes\":")
                out.integer(subscriber.queuedBytes)
                out.raw(",\"lastEventId\":")
                if let last = subscriber.lastEventID { out.integer(last) } else { out.raw("null") }
                out.raw(",\"drops\":")
                out.integer(subscriber.drops)
                out.raw(",\"select\":")
                if let select = subscriber.select { out.string(select) } else { out.raw("null") }
                out.raw("}")
            }
            out.raw("]}")
        }
        var first = resident.isEmpty
        for entry in remote {
            if !first { out.raw(",") }
            first = false
            out.raw(entry)
        }
        if includeStored { storedSessionsJSON(&out, first: first, skipping: remoteIDs) }
        out.raw("]")
        if !unreachable.isEmpty {
            // Their sessions are listed from storage (as not resident): what they hold in memory is unknown.
            out.raw(",\"unreachableInstances\":[")
            for (index, name) in unreachable.enumerated() {
                if index > 0 { out.raw(",") }
                out.string(name)
            }
            out.raw("]")
        }
        out.raw("}")
        if failing { exchange.dependsOn = 0 }
        exchange.reply(200, json: out.bytes)
    }

    /// `GET /admin/sessions/{id}/actions?since=SEQ&limit=N`.
    func adminActions(_ exchange: Exchange) {
        let id = exchange.id
        if forwardToOwner(id, exchange) { return }
        guard let session = store.session(id) else {
            if quarantinedActionLog(id, exchange) { return }
            return exchange.fail(store.absence(id))
        }
        guard let since = exchange.integerQuery("since", default: 0, range: 0...UInt64.max),
            let limit = exchange.integerQuery("limit", default: 1000, range: 1...100_000)
        else { return }
        let (entries, next) = session.actionLog(since: since, limit: Int(limit))
        let refused = session.refusedActions(entries.map(\.seq))
        var out = JSONWriter(capacity: 64 + entries.count * 96)
        out.raw("{\"actions\":[")
        for (index, entry) in entries.enumerated() {
            if index > 0 { out.raw(",") }
            Self.write(entry, crashed: false, refusal: refused[entry.seq], to: &out)
        }
        out.raw("]")
        if let next {
            out.raw(",\"next\":")
            out.integer(next)
        }
        out.raw("}")
        replyShowing(session, json: out.bytes, exchange)
    }

    /// `PUT /admin/sessions/{id}/stub` `{"enabled": true|false}` → `{"stub": …}`.
    func adminStub(_ exchange: Exchange) {
        let id = exchange.id
        if forwardToOwner(id, exchange) { return }
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        guard let body = exchange.jsonObject(parsingWith: bodyParser) else { return }
        guard case .bool(let enabled)? = body["enabled"] else {
            return exchange.fail(
                APIError(
                    .invalidBodyMember,
                    #"the body must be {"enabled": true} or {"enabled": false}"#))
        }
        session.setStub(enabled: enabled)
        logger.notice(
            enabled ? "stub mode on: actions are recorded, not run" : "stub mode off", ["session": .string(id)])
        exchange.dependsOn = session.storedPosition
        exchange.reply(200, json: Array((enabled ? #"{"stub":true}"# : #"{"stub":false}"#).utf8))
    }

    /// `PUT /admin/sessions/{id}/state` (stub mode only): forces a state, emitted as a new version.
    func adminState(_ exchange: Exchange) {
        let id = exchange.id
        if forwardToOwner(id, exchange) { return }
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        guard let body = exchange.jsonBody() else { return }
        guard session.isStubEnabled else {
            return exchange.fail(
                APIError(
                    .stubDisabled,
                    "states can be forced only in stub mode: PUT /admin/sessions/\(id)/stub {\"enabled\": true} first"))
        }
        do {
            _ = try bodyParser.parse(body)
        } catch {
            return exchange.fail(.invalidJSON(error.message))
        }
        session.forceState(json: body) { result in
            switch result {
            case .success(let snapshot):
                var out = JSONWriter(capacity: 32 + snapshot.state.count)
                out.raw("{")
                out.snapshotMembers(snapshot)
                out.raw("}")
                exchange.dependsOn = session.storedPosition
                exchange.reply(200, json: out.bytes)
            case .failure(let error):
                exchange.fail(error)
            }
        }
    }
}

extension ReactorService {
    /// `POST /admin/sessions/{id}/token` → `{"token": "<new secret>"}`: replaces the session's capability
    /// token (token mode); the old one stops working at once.
    func replaceSessionToken(_ exchange: Exchange) {
        let id = exchange.id
        guard access.kind == .token else {
            return exchange.fail(
                APIError(
                    .notTokenMode,
                    "sessions are not guarded by tokens here (auth.sessions is \(access.kind.rawValue)); "
                        + "tokens exist only with auth.sessions=token"))
        }
        let token = SessionToken.generate()
        // Stored with the session, which need not be loaded for it.
        guard store.replaceAccessTokenHash(token.hash, for: id) else { return exchange.fail(store.absence(id)) }
        logger.notice("replaced a session's token", ["session": .string(id)])
        var out = JSONWriter(capacity: 64)
        out.raw("{\"token\":")
        out.string(token.text)
        out.raw("}")
        exchange.reply(200, json: out.bytes)
    }
}

extension ReactorService {
    /// Admin listing entries of stored sessions that are not in memory: passivated, or quarantined.
    func storedSessionsJSON(_ out: inout JSONWriter, first: Bool, skipping listed: Set<String> = []) {
        guard let storage = store.storage else { return }
        var first = first
        for info in storage.storedSessions().sorted(by: { $0.id < $1.id })
        where (!info.resident || info.unavailable != nil) && !listed.contains(info.id) {
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
