import JSONCodec

/// `GET /openapi.json`: the OpenAPI 3.1 description of this server as configured, generated from
/// ``Route/table`` (every route, its parameters, body and answers), the hosted reactors' schemas (their
/// actions as a `oneOf` on `"type"`, their states) and the settings that change what the server answers
/// (access mode, rate limits, memory-only storage). `?reactor=NAME` gives the same document narrowed to
/// one reactor: sessions created through it are of that reactor, so every action it describes is one the
/// session accepts (a fuzzer needs that; the full document can only say "an action of one of them").
///
/// ```swift
/// let document = OpenAPIDocument(definitions: catalog.definitions, settings: .init(configuration, access: .open))
/// document.json(reactor: nil)          // every reactor
/// document.json(reactor: "counter")    // counter sessions only
/// ```
struct OpenAPIDocument: Sendable {
    /// What of the configuration shows in the document.
    struct Settings: Sendable {
        var access: SessionAccessMode.Kind = .open
        var requestRateLimit = false
        var sessionRateLimit = false
        var actionByteLimit = false
        var memoryOnly = false
        var restrictedReactors = false
        /// `auth.clientChosenIDs` is false: `POST /sessions` takes no id.
        var serverChosenIDsOnly = false
        /// `sse.maxSessionsPerStream`.
        var maxSessionsPerStream = 100
        /// A reactor the document shows has middlewares of its own, which may refuse with codes of their own.
        var reactorMiddlewares = false

        init() {}

        init(_ configuration: ServerConfiguration, access: SessionAccessMode.Kind) {
            self.access = access
            requestRateLimit = configuration.limits.requestsPerSecond > 0
            sessionRateLimit = configuration.limits.sessionsPerMinute > 0
            actionByteLimit = configuration.limits.actionBytesPerMinute > 0
            memoryOnly = configuration.storage.memoryOnly
            restrictedReactors = !configuration.auth.reactors.isEmpty
            serverChosenIDsOnly = !configuration.auth.clientChosenIDs
            maxSessionsPerStream = configuration.sse.maxSessionsPerStream
        }

        /// Whether the server, so configured, can give answers listed under `condition`.
        func allows(_ condition: RouteCondition) -> Bool {
            switch condition {
            case .always: true
            case .memoryOnly: memoryOnly
            case .tokenMode: access == .token
            case .notTokenMode: access != .token
            case .creationRestricted: restrictedReactors || serverChosenIDsOnly || access == .jwt
            case .sessionRateLimit: sessionRateLimit
            case .actionByteLimit: actionByteLimit
            case .reactorMiddlewares: reactorMiddlewares
            }
        }
    }

    let definitions: [ReactorDefinition]
    var settings: Settings

    /// The document for every hosted reactor (`reactor` nil) or for sessions of one, as JSON.
    func json(reactor: String?) -> [UInt8] {
        document(reactor: reactor).serialized()
    }

    /// The document as a JSON value.
    func document(reactor: String?) -> JSONValue {
        let shown = reactor.map { name in definitions.filter { $0.name == name } } ?? definitions
        let middlewares = shown.contains(where: \.hasMiddlewares)
        if settings.reactorMiddlewares != middlewares {
            var view = self
            view.settings.reactorMiddlewares = middlewares
            return view.document(reactor: reactor)
        }
        let schemas = Schemas(definitions: shown, hosted: definitions.map(\.name), settings: settings)
        var paths = JSONObject()
        for entry in Route.table {
            var item = paths[entry.pattern]?.objectValue ?? Self.pathItem(entry.pattern)
            item[entry.method.lowercased()] = operation(entry, schemas)
            paths[entry.pattern] = .object(item)
        }
        return JSONValue.members([
            ("openapi", "3.1.0"),
            (
                "info",
                JSONValue.members([
                    ("title", "reactor-server"), ("version", "1.0.0"),
                    ("description", .string(description(reactor: reactor))),
                ])
            ),
            (
                "tags",
                [
                    JSONValue.members([
                        ("name", "service"),
                        ("description", "Pages, health, metrics, this document, the reactor list."),
                    ]),
                    JSONValue.members([
                        ("name", "sessions"), ("description", "Sessions, their actions and their event streams."),
                    ]),
                    JSONValue.members([("name", "admin"), ("description", "Operators: the admin bearer token.")]),
                ]
            ),
            ("paths", .object(paths)),
            (
                "components",
                JSONValue.members([
                    ("schemas", .object(schemas.components())),
                    ("responses", .object(Self.generalResponses(settings))),
                    ("parameters", .object(schemas.parameters())),
                    ("securitySchemes", .object(schemas.securitySchemes())),
                ])
            ),
        ])
    }

    /// The path item of `pattern` with its path parameters.
    static func pathItem(_ pattern: String) -> JSONObject {
        let names = pattern.split(separator: "/").filter { $0.hasPrefix("{") }.map { $0.dropFirst().dropLast() }
        guard !names.isEmpty else { return JSONObject() }
        return JSONObject([
            (
                "parameters",
                .array(names.map { JSONValue.members([("$ref", .string("#/components/parameters/\($0)"))]) })
            )
        ])
    }

    /// One operation: summary, parameters, body, security and every answer the route can give here.
    func operation(_ entry: Route.Entry, _ schemas: Schemas) -> JSONValue {
        let documentation = entry.documentation
        var operation = JSONObject([
            ("operationId", .string(entry.route.name)),
            ("summary", .string(documentation.summary)),
            (
                "tags",
                [
                    .string(
                        entry.pattern.hasPrefix("/admin")
                            ? "admin" : entry.pattern.hasPrefix("/sessions") ? "sessions" : "service")
                ]
            ),
        ])
        // The list of session tokens exists only in token mode.
        let parameters = documentation.parameters.filter { $0 != .sessionTokens || settings.access == .token }
        if !parameters.isEmpty {
            operation["parameters"] = .array(
                parameters.map { JSONValue.members([("$ref", .string("#/components/parameters/\($0.rawValue)"))]) })
        }
        if let body = documentation.body {
            operation["requestBody"] = JSONValue.members([
                ("required", true),
                (
                    "content",
                    JSONValue.members([
                        ("application/json", JSONValue.members([("schema", schemas.payload(body).json)]))
                    ])
                ),
            ])
        }
        if let security = schemas.security(for: entry.access) { operation["security"] = security }
        operation["responses"] = .object(responses(entry, schemas))
        return .object(operation)
    }

    /// The route's answers grouped by status, with those of every route (``generalAnswers``) and of its
    /// access check; a status only the general answers give refers to the shared response.
    func responses(_ entry: Route.Entry, _ schemas: Schemas) -> JSONObject {
        // A route whose answer shows sessions is held until what it shows is stored: if that fails (or never can
        // succeed, another instance having taken a session over), 503 storage_unavailable goes in its place
        // (HTTPRejection.Kind.notStored).
        let held = entry.needs.showsSessionState ? [RouteAnswer.error(.storageUnavailable)] : []
        let own =
            entry.documentation.answers.filter { settings.allows($0.condition) } + schemas.accessAnswers(entry.access)
            + held
        let general = Self.generalAnswers(settings)
        var byStatus: [Int: [RouteAnswer]] = [:]
        for answer in own + general { byStatus[answer.status, default: []].append(answer) }
        var responses = JSONObject()
        for status in byStatus.keys.sorted() {
            let answers = byStatus[status]!
            if !own.contains(where: { $0.status == status }) {
                responses[String(status)] = JSONValue.members([
                    ("$ref", .string("#/components/responses/\(Self.generalResponseName(status))"))
                ])
            } else if let success = answers.first(where: { $0.payload != nil }) {
                responses[String(status)] = schemas.successResponse(success)
            } else {
                responses[String(status)] = Self.errorResponse(answers)
            }
        }
        return responses
    }

    /// An error response: the codes this status can carry here, each with its meaning.
    static func errorResponse(_ answers: [RouteAnswer]) -> JSONValue {
        var codes: [String] = []
        var lines: [String] = []
        var anyCode = false
        for answer in answers {
            guard let code = answer.code, !codes.contains(code) else { continue }
            // An empty code stands for codes the server does not know in advance (a reactor's middleware's).
            if code.isEmpty {
                anyCode = true
                lines.append("- any other code: \(answer.meaning)")
                continue
            }
            codes.append(code)
            lines.append("- `\(code)`: \(answer.meaning)")
        }
        if anyCode { codes = [] }
        var response = JSONObject([("description", .string(lines.joined(separator: "\n")))])
        var headers = JSONObject()
        for (name, meaning) in answers.flatMap(\.headers) where headers[name] == nil {
            let always = answers.allSatisfy { answer in answer.headers.contains { $0.name == name } }
            headers[name] = Schemas.header(name, meaning, required: always)
        }
        if !headers.isEmpty { response["headers"] = .object(headers) }
        response["content"] = JSONValue.members([
            ("application/json", JSONValue.members([("schema", Schemas.error(codes: codes).json)]))
        ])
        return .object(response)
    }

    /// The document's introduction: the error shape, what every route can answer, the access mode.
    func description(reactor: String?) -> String {
        let view =
            reactor.map {
                "This view describes sessions of the reactor \"\($0)\" only: "
                    + "`POST /sessions` creates only those, and actions and states are that reactor's. "
                    + "Without `?reactor=` the document covers every hosted reactor."
            }
            ?? "Actions and states are those of every hosted reactor; "
            + "a session takes the actions of its own reactor only (others answer 422 unknown_action). "
            + "`GET /openapi.json?reactor=NAME` narrows this document to one reactor."
        let access =
            switch settings.access {
            case .open: "Sessions are open on this server (auth.sessions=open): anyone who knows an id may use it."
            case .token:
                "Session routes need the session's token (auth.sessions=token), "
                    + "as Authorization: Bearer or ?access_token=; POST /sessions returns it."
            case .jwt:
                "Session routes need an HS256 JWT naming the session and the right "
                    + "(auth.sessions=jwt), as Authorization: Bearer or ?access_token=."
            }
        return """
            A state service hosting one ReactorKit-style reactor per session: clients POST actions, subscribers watch \
            states over Server-Sent Events, admin routes expose stub mode, action logs, time travel and forks. \
            Every error is `{"error": {"code", "message"}}`; each operation lists every status and code it can answer \
            here, including those of the HTTP server itself (400 bad_request, 408, 413, 414, 431, 501, 505, the 503s \
            and 500; these close the connection). A method a path does not serve gets 405 method_not_allowed with \
            Allow, OPTIONS gets 204 with Allow (and CORS preflight headers for allowed origins), and HEAD is served \
            wherever GET is, with GET's headers and no body. \(access) \(view)
            """
    }
}

extension JSONValue {
    /// A JSON object from members in order; nil values are left out.
    static func members(_ members: [(String, JSONValue?)]) -> JSONValue {
        .object(JSONObject(members.compactMap { name, value in value.map { (name, $0) } }))
    }
}
