#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import JSONCodec
import Tokens

extension ReactorService {
    /// `POST /sessions` `{"reactor": "counter", "id": "optional", "params": {…}}` → 201.
    func createSession(_ exchange: Exchange) {
        guard let body = exchange.jsonObject(parsingWith: bodyParser) else { return }
        guard case .string(let name)? = body["reactor"] else {
            return exchange.fail(APIError(
                .bodyNotObject,
                #"the body must name a reactor: {"reactor": "counter"}; GET /reactors lists them"#))
        }
        guard let definition = catalog.definition(named: name) else {
            return exchange.fail(.unknownReactor(name, known: catalog.definitions.map(\.name)))
        }
        guard mayCreate(name) else {
            return exchange.fail(APIError(
                .forbidden,
                "sessions of reactor \(JSONWriter.quoted(name)) may not be created here (auth.reactors allows "
                    + "\(configuration.auth.reactors.joined(separator: ", ")))"))
        }
        let id: String
        switch body["id"] {
        case nil, .null?:
            id = SessionID.random()
        case .string(let chosen)?:
            // Before anything about the id is looked at: the same answer whether it exists or not.
            guard configuration.auth.clientChosenIDs else {
                return exchange.fail(APIError(
                    .forbidden,
                    #"this server picks session ids itself (auth.clientChosenIDs is false): leave "id" out"#))
            }
            guard SessionID.isValid(chosen) else {
                return exchange.fail(APIError(
                    .invalidID,
                    "a session id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -; got "
                        + "\(JSONWriter.quoted(String(chosen.prefix(80))))"))
            }
            id = chosen
        case let other?:
            return exchange.fail(APIError(
                .invalidID, "\"id\" must be a string, got \(other.serializedString().prefix(80))"))
        }
        if let claims = exchange.claims, let refusal = claims.refusal(right: .create, sessionID: body["id"] == nil || body["id"] == .null ? nil : id) {
            return exchange.fail(APIError(.forbidden, refusal))
        }
        let params: SessionParams
        do throws(ParamsError) {
            params = try definition.decodeParams(body["params"])
        } catch {
            return exchange.fail(APIError(
                .invalidParams,
                "\(error.message) (reactor \(JSONWriter.quoted(name)); /openapi.json describes its params)"))
        }
        if let reason = store.storage?.unavailableReason { return exchange.fail(.storageUnavailable(reason)) }
        let token = newToken()
        let session: any HostedSession
        do {
            session = try store.insert(id: id, accessTokenHash: token?.hash) { accessTokenHash in
                definition.makeSession(id, context, accessTokenHash, params)
            }
        } catch .exists {
            return exchange.fail(APIError(.sessionExists, "a session with id \(JSONWriter.quoted(id)) already exists"))
        } catch {
            return exchange.fail(APIError(
                .tooManySessions,
                "the server holds its limit of \(store.limit) sessions (sessions.limit); delete some or try later"))
        }
        metrics.sessions.increment()
        let snapshot = session.snapshot()
        store.settle(session)
        exchange.dependsOn = session.storedPosition
        exchange.reply(201, json: Self.sessionJSON(session, snapshot, token: token), headers: [("Location", "/sessions/\(id)")])
    }

    /// Whether `auth.reactors` lets `POST /sessions` create sessions of this reactor.
    func mayCreate(_ reactor: String) -> Bool {
        configuration.auth.reactors.isEmpty || configuration.auth.reactors.contains(reactor)
    }

    /// In token mode, a fresh capability token (its hash is stored with the session, the text returned once).
    func newToken() -> SessionToken? {
        access.kind == .token ? SessionToken.generate() : nil
    }

    /// `DELETE /sessions/{id}` → 204; subscribers get `event: end`.
    func deleteSession(_ id: String, _ exchange: Exchange) {
        guard let session = store.remove(id) else { return exchange.fail(store.absence(id)) }
        session.end()
        context.timers.note(id, at: nil)
        metrics.sessions.decrement()
        // A quarantined session's crash records go with it (an operator acted).
        crashes.forget(id)
        if store.storage != nil {
            logger.info("deleted a session; its records in the journal are erased in the background within seconds", ["session": .string(id)])
        }
        exchange.reply(204, body: [], contentType: nil)
    }

    /// `{"id", "reactor", "version", "state"}`, `"params"` when its reactor takes them, and `"token"` when one
    /// was just issued.
    static func sessionJSON(_ session: any HostedSession, _ snapshot: EncodedSnapshot, token: SessionToken? = nil) -> [UInt8] {
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

    /// `GET /reactors`: every hosted reactor with its initial state and example actions.
    static func reactorsJSON(_ catalog: ReactorCatalog) -> [UInt8] {
        var out = JSONWriter(capacity: 1024)
        out.raw("{\"reactors\":[")
        for (index, definition) in catalog.definitions.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"name\":")
            out.string(definition.name)
            out.raw(",\"description\":")
            out.string(definition.summary)
            out.raw(",\"initialState\":")
            out.raw(definition.initialState)
            if let example = definition.exampleParams {
                out.raw(",\"params\":")
                out.raw(example)
            }
            out.raw(",\"actions\":[")
            var first = true
            for example in definition.exampleActions {
                // Examples are the registrant's text: include only those that are JSON.
                guard let value = try? JSONParser().parse(Array(example.utf8)) else { continue }
                if !first { out.raw(",") }
                first = false
                out.raw(value.serialized())
            }
            out.raw("]}")
        }
        out.raw("]}")
        return out.bytes
    }
}

extension Exchange {
    /// Whether the request says its body is JSON (`application/json`, any parameters, or `+json`).
    var hasJSONContentType: Bool {
        request.headers.firstValue("Content-Type", satisfies: Self.isJSONMediaType)
    }

    /// Compared as bytes, case-insensitively, without allocating: this runs on every POST.
    static func isJSONMediaType(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        // What nearly every client sends, compared in one go (the loop below costs ~13
        // instructions a byte).
        let usual: StaticString = "application/json"
        if bytes.count == usual.utf8CodeUnitCount && memcmp(base, usual.utf8Start, usual.utf8CodeUnitCount) == 0 { return true }
        var start = 0
        var end = 0
        while end < bytes.count && base[end] != UInt8(ascii: ";") { end += 1 }
        while start < end, base[start] == UInt8(ascii: " ") || base[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, base[end - 1] == UInt8(ascii: " ") || base[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        @inline(__always)
        func matches(_ text: StaticString, at offset: Int) -> Bool {
            let count = text.utf8CodeUnitCount
            guard offset >= start, offset + count <= end else { return false }
            let pattern = text.utf8Start
            var i = 0
            while i < count {
                let byte = base[offset + i]
                if (byte &- 65 < 26 ? byte | 0x20 : byte) != pattern[i] { return false }
                i += 1
            }
            return true
        }
        if end - start == 16 { return matches("application/json", at: start) }
        return matches("application/", at: start) && end - start > 17 && matches("+json", at: end - 5)
    }

    /// Checks the content type and returns the body, or answers 415 and returns nil.
    func jsonBody() -> [UInt8]? {
        guard hasJSONContentType else {
            fail(.unsupportedMediaType(request.headers["Content-Type"]))
            return nil
        }
        return request.body
    }

    /// The body parsed as a JSON object by `parser` (its limit is the body limit), or an error answer
    /// (415, 400 `invalid_json`) and nil.
    func jsonObject(parsingWith parser: JSONParser) -> JSONObject? {
        guard let body = jsonBody() else { return nil }
        let value: JSONValue
        do {
            value = try parser.parse(body)
        } catch {
            fail(.invalidJSON(error.message))
            return nil
        }
        guard case .object(let object) = value else {
            fail(APIError(.bodyNotObject, "the body must be a JSON object"))
            return nil
        }
        return object
    }
}
