import HTTPServer
import JSONCodec
import Tokens

extension ReactorService {
    /// `POST /sessions` `{"reactor": "counter", "id": "optional", "params": {…}}` → 201.
    func createSession(_ exchange: Exchange) {
        guard let body = exchange.jsonObject(parsingWith: bodyParser) else { return }
        let definition: ReactorDefinition
        let id: String
        do {
            definition = try creatableReactor(body)
            id = try newSessionID(body)
        } catch {
            return exchange.fail(error)
        }
        let name = definition.name
        if let claims = exchange.claims,
            let refusal = claims.refusal(right: .create, sessionID: body["id"] == nil || body["id"] == .null ? nil : id)
        {
            return exchange.fail(APIError(.forbidden, refusal))
        }
        let params: SessionParams
        do throws(ParamsError) {
            params = try definition.decodeParams(body["params"])
        } catch {
            return exchange.fail(
                APIError(
                    .invalidParams,
                    "\(error.message) (reactor \(JSONWriter.quoted(name)); /openapi.json describes its params)"))
        }
        if let reason = store.storage?.unavailableReason { return exchange.fail(.storageUnavailable(reason)) }
        let token = newToken()
        let session: any PersistentSession
        do {
            session = try store.insert(id: id, accessTokenHash: token?.hash) { accessTokenHash in
                definition.makeSession(id, context, accessTokenHash, params)
            }
        } catch .exists {
            return exchange.fail(APIError(.sessionExists, "a session with id \(JSONWriter.quoted(id)) already exists"))
        } catch {
            return exchange.fail(
                APIError(
                    .tooManySessions,
                    "the server holds its limit of \(store.limit) sessions (sessions.limit); delete some or try later"))
        }
        metrics.sessions.increment()
        let snapshot = session.snapshot()
        store.settle(session)
        exchange.dependsOn = session.storedPosition
        exchange.reply(
            201, json: Self.sessionJSON(session, snapshot, token: token), headers: [("Location", "/sessions/\(id)")])
    }

    /// The reactor `body` names, if it is hosted and `auth.reactors` lets sessions of it be created here.
    func creatableReactor(_ body: JSONObject) throws(APIError) -> ReactorDefinition {
        guard case .string(let name)? = body["reactor"] else {
            throw APIError(
                .bodyNotObject, #"the body must name a reactor: {"reactor": "counter"}; GET /reactors lists them"#)
        }
        guard let definition = catalog.definition(named: name) else {
            throw .unknownReactor(name, known: catalog.definitions.map(\.name))
        }
        guard mayCreate(name) else {
            throw APIError(
                .forbidden,
                "sessions of reactor \(JSONWriter.quoted(name)) may not be created here (auth.reactors allows "
                    + "\(configuration.auth.reactors.joined(separator: ", ")))")
        }
        return definition
    }

    /// The new session's id: the one `body` chooses (when `auth.clientChosenIDs` allows and it is valid), or a
    /// random one.
    func newSessionID(_ body: JSONObject) throws(APIError) -> String {
        switch body["id"] {
        case nil, .null?:
            return SessionID.random()
        case .string(let chosen)?:
            // Before anything about the id is looked at: the same answer whether it exists or not.
            guard configuration.auth.clientChosenIDs else {
                throw APIError(
                    .forbidden, #"this server picks session ids itself (auth.clientChosenIDs is false): leave "id" out"#
                )
            }
            guard SessionID.isValid(chosen) else {
                throw APIError(
                    .invalidID,
                    "a session id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -; got "
                        + "\(JSONWriter.quoted(String(chosen.prefix(80))))")
            }
            return chosen
        case let other?:
            throw APIError(.invalidID, "\"id\" must be a string, got \(other.serializedString().prefix(80))")
        }
    }

    /// Whether `auth.reactors` lets `POST /sessions` create sessions of this reactor.
    func mayCreate(_ reactor: String) -> Bool {
        configuration.auth.reactors.isEmpty || configuration.auth.reactors.contains(reactor)
    }

    /// In token mode, a fresh capability token (its hash is stored with the session, the text returned once).
    func newToken() -> SessionToken? {
        access.kind == .token ? SessionToken.generate() : nil
    }

    /// `GET /sessions/{id}` → `{"id", "reactor", "version", "state"}`.
    func getSession(_ exchange: Exchange) {
        let id = exchange.id
        withSession(id, exchange) { session in
            // It shows this session's state, so only its own records need be durable.
            let snapshot = session.snapshot()
            replyShowing(session, json: Self.sessionJSON(session, snapshot), exchange)
        }
    }

    /// `DELETE /sessions/{id}` → 204; subscribers get `event: end`.
    func deleteSession(_ exchange: Exchange) {
        let id = exchange.id
        guard let removal = store.remove(id) else { return exchange.fail(store.absence(id)) }
        if case .resident(let session) = removal { session.end() }
        context.timers.note(id, at: nil)
        metrics.sessions.decrement()
        // A quarantined session's crash records go with it (an operator acted).
        crashes.forget(id)
        if store.storage != nil {
            logger.info(
                "deleted a session; its records in the journal are erased in the background within seconds",
                ["session": .string(id)])
        }
        exchange.reply(204, body: [], contentType: nil)
    }

    /// `{"id", "reactor", "version", "state"}`, `"params"` when its reactor takes them, and `"token"` when one
    /// was just issued.
    static func sessionJSON(_ session: any HostedSession, _ snapshot: EncodedSnapshot, token: SessionToken? = nil)
        -> [UInt8]
    {
        let params = session.params
        var out = JSONWriter(capacity: 128 + snapshot.state.count + params.count)
        out.raw("{\"id\":")
        out.string(session.id)
        out.raw(",\"reactor\":")
        out.string(session.reactorName)
        if !params.isEmpty {
            out.raw(",\"params\":")
            out.raw(params)
        }
        out.raw(",")
        out.snapshotMembers(snapshot)
        if let token {
            out.raw(",\"token\":")
            out.string(token.text)
        }
        out.raw("}")
        return out.bytes
    }
}
