import JSONCodec

extension OpenAPIDocument {
    /// The schemas of one view of the document: the reactors it shows, and the bodies built on them.
    struct Schemas {
        /// The reactors this view describes (one with `?reactor=`, else every hosted one).
        let definitions: [ReactorDefinition]
        /// Every hosted reactor's name (the reactor list and `?reactor=` name them all).
        let hosted: [String]
        let settings: Settings

        static let idPattern = "^[A-Za-z0-9_-]{1,64}$"
        static let id = JSONSchema.string(pattern: idPattern)
        /// RFC 6901: empty, or `/`-separated tokens in which `~` is only `~0` or `~1`.
        static let jsonPointer = JSONSchema.string(pattern: "^(/([^~/]|~[01])*)*$")
        /// RFC 6902: an array of operations; the server writes add, remove and replace.
        static let jsonPatch = JSONSchema.array(
            JSONSchema.oneOf([
                JSONSchema.object(["op": .enumeration(["add", "replace"]), "path": jsonPointer, "value": .any]),
                JSONSchema.object(["op": .constant("remove"), "path": jsonPointer]),
            ])
        ).described("An RFC 6902 JSON Patch; its paths point into the state (with select, the value).")

        static func ref(_ name: String) -> JSONSchema { .reference("#/components/schemas/\(name)") }

        /// `{"error": {"code", "message"}}` with `code` one of `codes` (any code when empty).
        static func error(codes: [String]) -> JSONSchema {
            let code =
                codes.isEmpty
                ? JSONSchema.string() : JSONSchema.string().adding("enum", .array(codes.map(JSONValue.string)))
            return .object(["error": .object(["code": code, "message": .string()], additionalProperties: false)])
        }

        /// The reactors' names in this view.
        var names: [JSONValue] { definitions.map { .string($0.name) } }

        /// Component schemas: the error, the session, the action and the state of this view's reactors
        /// (each case of each reactor's action its own schema, told apart by `"type"`), the event.
        func components() -> JSONObject {
            var schemas = JSONObject([("Error", Self.error(codes: []).json)])
            schemas["Session"] =
                JSONSchema.object(
                    [
                        "id": Self.id, "reactor": .enumeration(names), "version": .unsigned(),
                        "state": Self.ref("State"),
                        "params": Self.ref("Params").described(
                            "The parameters it was created with; present when its reactor takes them."),
                    ], optional: ["params"]
                ).titled(
                    "Session",
                    "A session: its id, its reactor, its version "
                        + "(0 at creation, +1 per state), its current state and its parameters."
                ).json
            let token = JSONSchema.string(pattern: "^[A-Za-z0-9_-]{43}$").described(
                "The session's capability token (256 random bits), shown only here.")
            schemas["CreatedSession"] =
                settings.access == .token
                ? JSONSchema.allOf([Self.ref("Session"), .object(["token": token])]).json : Self.ref("Session").json
            var actions: [JSONSchema] = []
            var states: [JSONSchema] = []
            var params: [JSONSchema] = []
            for definition in definitions {
                reactorSchemas(definition, into: &schemas)
                actions.append(Self.ref("\(definition.name).Action"))
                states.append(Self.ref("\(definition.name).State"))
                if definition.takesParams { params.append(Self.ref("\(definition.name).Params")) }
            }
            // What a reactor without parameters accepts: nothing, null or {} (anything else is 422 invalid_params).
            let empty = JSONSchema.object([:]).adding("maxProperties", 0).orNull
            let none = "No reactor here takes parameters: leave params out (or send {} or null)."
            let some =
                "The parameters of a session's reactor (POST /sessions takes them as params; {}, null or left "
                + "out for a reactor that takes none)."
            if params.isEmpty {
                schemas["Params"] = empty.described(none).json
            } else if params.count == definitions.count {
                // Every reactor described takes parameters (a document narrowed to one that does): only theirs.
                schemas["Params"] = Self.union(params, some).json
            } else {
                schemas["Params"] = Self.union(params + [empty], some).json
            }
            schemas["Action"] =
                Self.union(
                    actions,
                    "An action: a JSON object whose \"type\" names the case and whose other members are its payload "
                        + "(members the reactor does not read are ignored)."
                ).json
            schemas["State"] = Self.union(states, "A state of the session's reactor.").json
            schemas["Event"] = Self.event.json
            return schemas
        }

        /// One of `schemas` (the one schema itself when there is only one), described.
        static func union(_ schemas: [JSONSchema], _ description: String) -> JSONSchema {
            (schemas.count == 1 ? JSONSchema.allOf(schemas) : .anyOf(schemas)).described(description)
        }

        /// A reactor's action (each case a schema, the `oneOf` told apart by `"type"`) and state.
        func reactorSchemas(_ definition: ReactorDefinition, into schemas: inout JSONObject) {
            let name = definition.name
            if definition.takesParams {
                let described =
                    definition.schema?.params
                    ?? JSONSchema.object([:]).described("Parameters the reactor did not describe: a JSON object.")
                schemas["\(name).Params"] =
                    described.titled(
                        "\(name) params", "What POST /sessions takes as params for reactor \(name)."
                    ).json
            }
            guard let schema = definition.schema else {
                schemas["\(name).Action"] = ReactorSchema.genericAction.json
                schemas["\(name).State"] = ReactorSchema.genericState.json
                return
            }
            var cases: [JSONSchema] = []
            var mapping = JSONObject()
            for action in schema.actions {
                var component = "\(name).\(Self.componentName(action.type))"
                while schemas[component] != nil { component += "_" }
                schemas[component] = action.schema.json
                cases.append(Self.ref(component))
                mapping[action.type] = .string("#/components/schemas/\(component)")
            }
            let action =
                cases.isEmpty
                ? JSONSchema(.bool(false))
                : JSONSchema.oneOf(cases).adding(
                    "discriminator", .members([("propertyName", "type"), ("mapping", .object(mapping))]))
            schemas["\(name).Action"] =
                action.titled("\(name) action", definition.summary.isEmpty ? nil : definition.summary).json
            schemas["\(name).State"] = schema.state.json
        }

        /// A component name from an action type: characters OpenAPI does not allow in names become `_`.
        static func componentName(_ text: String) -> String {
            String(
                text.unicodeScalars.map { scalar in
                    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                        || "._-".unicodeScalars.contains(scalar)
                        ? Character(scalar) : "_"
                })
        }

        /// An `event: error`'s code: the ones the server sends, each with what it means.
        static let streamErrorCode: JSONSchema = JSONSchema.string()
            .described(
                "Why the server ended the stream (or, on GET /events, one session's part of it): "
                    + ServerSentEventVocabulary.errorCodes.map { "\($0.code): \($0.meaning)" }.joined(separator: "; ")
                    + "."
            )
            .adding("examples", .array(ServerSentEventVocabulary.errorCodes.map { .string($0.code) }))

        /// One event of a session's stream, as a client's parser reads it (`event`, `id`, `data`).
        static let event: JSONSchema = {
            func json(_ schema: JSONSchema) -> JSONSchema {
                JSONSchema.string().adding("contentMediaType", "application/json").adding("contentSchema", schema.json)
            }
            let version = JSONSchema.string(pattern: "^[0-9]+$").described("The state's version.")
            let failure = JSONSchema.object(["code": Self.streamErrorCode, "message": .string()])
            return JSONSchema.oneOf([
                // With select, data is the selected part (any JSON value),
                // so the state's schema cannot be required here.
                JSONSchema.object([
                    "event": .constant("state"), "id": version,
                    "data": json(.any).described(
                        "The state (see State) as one line of JSON; with select, the selected value (null when absent)."
                    ),
                ])
                .titled("state", "A new state and its version."),
                JSONSchema.object(["event": .constant("patch"), "id": version, "data": json(Self.jsonPatch)])
                    .titled("patch", "With delta=json-patch: the patch from the stream's state before to this one."),
                JSONSchema.object([
                    "event": .constant("pulse"),
                    "data": json(.object(["name": .string(), "value": .any, "count": .unsigned()])),
                ])
                .titled("pulse", "A pulse field assigned by the state sent just before (name: editor.alert)."),
                JSONSchema.object(["event": .constant("end"), "data": json(.object(["reason": .string()]))])
                    .titled("end", "The session was deleted; the stream closes."),
                JSONSchema.object(["event": .constant("error"), "data": json(failure)])
                    .titled(
                        "error",
                        "The server ends a stream it cannot keep (session_passivated, subscriber_too_slow, ...); "
                            + "reconnect with Last-Event-ID."
                    ),
            ]).titled(
                "Event",
                "One Server-Sent Event of a session's stream; a quiet stream also gets `: keep-alive` comments.")
        }()

        /// One event of the stream of many sessions (`GET /events`): its data names its session, its `id:`
        /// is a cursor for the whole stream.
        static let sessionsEvent: JSONSchema = {
            func json(_ schema: JSONSchema) -> JSONSchema {
                JSONSchema.string().adding("contentMediaType", "application/json").adding("contentSchema", schema.json)
            }
            let cursor = JSONSchema.string().described("A cursor for the whole stream: send it back as Last-Event-ID.")
            return JSONSchema.oneOf([
                JSONSchema.object([
                    "event": .constant("state"), "id": cursor,
                    "data": json(.object(["session": id, "version": .unsigned(), "state": .any])),
                ])
                .titled("state", "A new state of one session (with select, the selected value)."),
                JSONSchema.object([
                    "event": .constant("patch"), "id": cursor,
                    "data": json(.object(["session": id, "version": .unsigned(), "patch": Self.jsonPatch])),
                ]).titled("patch", "With delta=json-patch: the patch from that session's state before to this one."),
                JSONSchema.object([
                    "event": .constant("pulse"),
                    "data": json(.object(["session": id, "name": .string(), "value": .any, "count": .unsigned()])),
                ])
                .titled("pulse", "A pulse field assigned by that session's state sent just before."),
                JSONSchema.object([
                    "event": .constant("end"), "data": json(.object(["session": .string(), "reason": .string()])),
                ])
                .titled(
                    "end",
                    "One session's part ends (deleted, unknown_session, unauthorized, ...); "
                        + "the stream goes on while another is live."
                ),
                JSONSchema.object(
                    [
                        "event": .constant("error"), "id": cursor,
                        "data": json(
                            .object(
                                ["session": id, "code": Self.streamErrorCode, "message": .string()],
                                optional: ["session"])),
                    ], optional: ["id"]
                )
                .titled(
                    "error",
                    "The server ends one session's part (data names it) or the whole stream (data names none); "
                        + "reconnect with Last-Event-ID."),
            ]).titled(
                "SessionsEvent",
                "One Server-Sent Event of a stream of several sessions; "
                    + "a quiet stream also gets `: keep-alive` comments."
            )
        }()
    }
}
