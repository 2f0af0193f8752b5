import JSONCodec

extension OpenAPIDocument.Schemas {
    /// The `"crash"` of a session a crash of its reactor quarantined, in the admin listing.
    static var crash: JSONSchema {
        JSONSchema.object([
            "phase": JSONSchema.string().described(
                "What was running: reduce, mutate, effect, transformState, replay, decodeAction, recover (at "
                    + "load), middleware (the reactor's own), …"),
            "seq": JSONSchema.unsigned().described("The action's seq (0: none)."),
            "version": JSONSchema.unsigned().described("The version being made, shown or replayed (0: none)."),
            "signal": JSONSchema.string().described("SIGILL, SIGSEGV, …"),
            "at": JSONSchema.string().adding("format", "date-time").described("When it crashed (RFC 3339, UTC)."),
            "crashes": JSONSchema.unsigned().described("How many crashes its records hold."),
            "lastGoodVersion": JSONSchema.unsigned().described("The newest version a fork or time travel may rebuild."),
        ]).described("Present when a crash of the session's reactor quarantined it: the latest crash.")
    }

    /// The schema of a body a route takes or answers with (JSON bodies; pages and streams by media type).
    func payload(_ payload: RoutePayload) -> JSONSchema {
        let version = JSONSchema.unsigned().described("The session's version: 0 at creation, one more for every state.")
        let seq = Self.seq
        let state = Self.ref("State")
        switch payload {
        case .html, .svg, .metrics: return .string()
        case .empty: return .any
        case .openAPI: return .object(["openapi": .constant("3.1.0"), "info": .object([:]), "paths": .object([:])])
        case .health: return .object(["status": .constant("ok")])
        case .reactors: return reactorsSchema
        case .session: return Self.ref("Session")
        case .createdSession: return Self.ref("CreatedSession")
        case .actionAccepted: return .object(["seq": seq])
        case .actionReduced: return .object(["seq": seq, "version": version, "state": state])
        case .eventStream: return Self.ref("Event")
        case .sessionsEventStream: return Self.sessionsEvent
        case .adminSessions: return adminSessionsSchema
        case .actionLog: return actionLogSchema
        case .timers:
            let timer = JSONSchema.object([
                "name": .string(),
                "at": JSONSchema.string().adding("format", "date-time").described("When it falls due (RFC 3339, UTC)."),
                "action": Self.ref("Action").described("The action it sends to the session."),
            ])
            return .object(["timers": .array(timer)])
        case .stubFlag: return .object(["stub": .boolean])
        case .forcedState: return .object(["version": version, "state": state])
        case .stateAtVersion: return .object(["id": Self.id, "version": version, "state": state])
        case .sessionToken: return .object(["token": .string(pattern: "^[A-Za-z0-9_-]{43}$")])
        case .newSession: return newSessionSchema
        case .action: return Self.ref("Action")
        case .stubRequest: return .object(["enabled": .boolean])
        case .state: return state
        case .forkRequest:
            return .object(
                [
                    "version": JSONSchema.unsigned().described("The source's version to start from."),
                    "id": JSONSchema.string(pattern: Self.idPattern).orNull.described(
                        "The new session's id; left out or null: the server picks one."),
                ], optional: ["id"])
        }
    }

    /// An action's seq in a session.
    static var seq: JSONSchema {
        JSONSchema.unsigned().adding("minimum", 1).described("The action's number in the session, from 1.")
    }

    /// `GET /reactors`: every hosted reactor with its initial state and example actions.
    var reactorsSchema: JSONSchema {
        let reactor = JSONSchema.object(
            [
                "name": .enumeration(hosted.map(JSONValue.string)), "description": .string(), "initialState": .any,
                "actions": JSONSchema.array(.any).described(
                    "Example actions, one per case, as the reactor's author wrote them."),
                "params": JSONSchema.object([:]).described(
                    "Example parameters, for a reactor whose sessions take them."),
            ], optional: ["params"])
        return .object(["reactors": .array(reactor)])
    }

    /// `GET /admin/sessions`: every session with its reactor, version, subscribers and where it runs.
    var adminSessionsSchema: JSONSchema {
        let subscriber = JSONSchema.object([
            "queuedBytes": .unsigned(), "lastEventId": JSONSchema.unsigned().orNull, "drops": .unsigned(),
            "select": JSONSchema.string().orNull,
        ])
        let session = JSONSchema.object(
            [
                "id": Self.id, "reactor": .string(), "version": .unsigned(), "subscribers": .unsigned(),
                "stub": .boolean,
                "idleSeconds": .unsigned(),
                "resident": JSONSchema.boolean.described(
                    "False for a session only on disk (passivated, or not used since creation)."),
                "unavailable": JSONSchema.string().described(
                    "Why the session cannot be served (quarantined); its requests answer 409 session_unavailable."),
                "subscriberDetails": .array(subscriber),
                "instance": JSONSchema.string().described(
                    "With storage.backend=nats: the instance the session runs on (present for resident sessions)."),
                "crash": Self.crash,
            ], optional: ["idleSeconds", "resident", "unavailable", "subscriberDetails", "instance", "crash"])
        let unreachable = JSONSchema.array(.string()).described(
            "With storage.backend=nats: instances that did not answer; "
                + "their sessions are listed from storage, as not resident."
        )
        return .object(
            ["sessions": .array(session), "unreachableInstances": unreachable], optional: ["unreachableInstances"])
    }

    /// `GET /admin/sessions/{id}/actions`: the entries of a session's action log, a page at a time.
    var actionLogSchema: JSONSchema {
        let seq = Self.seq
        let entry = JSONSchema.object(
            [
                "seq": seq,
                "at": JSONSchema.string().adding("format", "date-time").described(
                    "When the action was accepted (RFC 3339, UTC)."),
                "action": Self.ref("Action").orNull.described(
                    "The action as it decoded, encoded again (members the reactor does not read are not kept); "
                        + "null only for a crashed action the crash record could not keep."),
                "stubbed": JSONSchema.boolean.described(
                    "Whether stub mode took the action: recorded, neither mutate nor reduce ran."),
                "interrupted": JSONSchema.constant(true).described(
                    "Present when the server stopped before the action's effects finished; it is never re-run."),
                "from": JSONSchema.constant("effect").described(
                    "Present when one of the session's own effects sent the action (ReactorContext.send); left "
                        + "out for a client's."),
                "crashed": JSONSchema.constant(true).described(
                    "Present on the action that was running when the session's reactor crashed the server "
                        + "(it was never acknowledged); only while the session is quarantined."),
                "timer": JSONSchema.string().described(
                    "Present when the session's own timer sent the action: the timer's name."),
                "error": JSONSchema.object(["code": .string(), "message": .string()]).described(
                    "Present when a state the action produced was refused (state_too_large, state_not_encodable)."),
            ], optional: ["interrupted", "from", "crashed", "error", "timer"])
        return .object(
            [
                "actions": .array(entry),
                "next": JSONSchema.unsigned().described(
                    "Present when more entries remain: pass it as the next since."),
            ], optional: ["next"])
    }

    /// `POST /sessions`: the reactor, the id and the parameters of a new session.
    var newSessionSchema: JSONSchema {
        let id =
            settings.serverChosenIDsOnly
            ? JSONSchema.null.described("This server picks every id (auth.clientChosenIDs is false): leave it out.")
            : JSONSchema.string(pattern: Self.idPattern).orNull.described(
                "The id to give the session; left out or null: the server picks one with 128 random bits.")
        return .object(
            [
                "reactor": JSONSchema.enumeration(names).described("The reactor type (GET /reactors lists them)."),
                "id": id,
                "params": Self.ref("Params").described(
                    "The session's parameters, for a reactor that takes them (422 invalid_params when they do not "
                        + "decode); left out, or {}, for one that takes none. Kept for the session's life."),
            ], optional: ["id", "params"])
    }

    /// The media type a payload is sent as.
    static func mediaType(_ payload: RoutePayload) -> String? {
        switch payload {
        case .html: "text/html"
        case .svg: "image/svg+xml"
        case .metrics: "text/plain"
        case .eventStream, .sessionsEventStream: "text/event-stream"
        case .empty: nil
        default: "application/json"
        }
    }

    /// A success response: its body, the headers it always carries and the operations it links to.
    func successResponse(_ answer: RouteAnswer) -> JSONValue {
        var response = JSONObject([("description", .string(answer.meaning))])
        if !answer.headers.isEmpty {
            response["headers"] = .object(
                JSONObject(answer.headers.map { ($0.name, Self.header($0.name, $0.meaning, required: true)) }))
        }
        if let payload = answer.payload, let mediaType = Self.mediaType(payload) {
            response["content"] = .members([(mediaType, .members([("schema", self.payload(payload).json)]))])
        }
        let links = Self.links(from: answer.payload, acrossReactors: definitions.count > 1)
        if !links.isEmpty { response["links"] = .object(links) }
        return .object(response)
    }

    /// A response header: its schema by name.
    static func header(_ name: String, _ meaning: String, required: Bool) -> JSONValue {
        let schema: JSONSchema =
            switch name {
            case "Location": .string(pattern: "^/sessions/[A-Za-z0-9_-]{1,64}$")
            case "Retry-After": .integer(minimum: 1)
            case "Cache-Control": .constant("no-cache")
            default: .string()
            }
        return .members([
            ("description", .string(meaning)), ("required", required ? true : nil), ("schema", schema.json),
        ])
    }

    /// What a client can do next with what an answer returns (OpenAPI links, for clients and for stateful
    /// fuzzing): a new session's id opens every route on it, and so does a session whose token was
    /// replaced; a new version opens time travel to it. In a view of several reactors, no link leads to
    /// a route whose body is one reactor's (an action, a forced state): the document offers every
    /// reactor's, and a session takes only its own (another's is 422), so such a link would promise
    /// what the session refuses.
    static func links(from payload: RoutePayload?, acrossReactors: Bool) -> JSONObject {
        var links = JSONObject()
        let reactorBodies: Set<Route> = acrossReactors ? [.postAction, .adminState] : []
        switch payload {
        case .createdSession?, .sessionToken?:
            let id: JSONValue = payload == .createdSession ? "$response.body#/id" : "$request.path.id"
            for target in Route.table where target.pattern.contains("{id}") && !reactorBodies.contains(target.route) {
                // A timer's name comes from its listing, not from the session.
                if target.pattern.contains("{name}") { continue }
                var parameters = JSONObject([("id", id)])
                if target.pattern.contains("{version}") {
                    guard payload == .createdSession else { continue }
                    parameters["version"] = "$response.body#/version"
                }
                links[target.route.name] = .members([
                    ("operationId", .string(target.route.name)), ("parameters", .object(parameters)),
                ])
            }
        case .actionReduced?, .forcedState?:
            links[Route.adminVersion.name] = .members([
                ("operationId", .string(Route.adminVersion.name)),
                ("parameters", .members([("id", "$request.path.id"), ("version", "$response.body#/version")])),
            ])
        case .stubFlag?:
            for target in [Route.adminState, .postAction] where !reactorBodies.contains(target) {
                links[target.name] = .members([
                    ("operationId", .string(target.name)), ("parameters", .members([("id", "$request.path.id")])),
                ])
            }
        default: break
        }
        return links
    }
}
