import JSONCodec

extension OpenAPIDocument {
    /// What any route can answer, whatever it does: the HTTP server's own answers (``HTTPRejection``, in the
    /// API's error shape, each closing the connection), the request rate limit, and a failure of the server.
    static func generalAnswers(_ settings: Settings) -> [RouteAnswer] {
        var answers = Self.generalErrors.map { RouteAnswer.error($0) }
        if settings.requestRateLimit { answers.append(.error(.rateLimited)) }
        return answers
    }

    /// The errors of every route: the HTTP server's own (each kind ``APIError/Kind/init(_:)`` gives an
    /// ``HTTPRejection``, but the storage refusal the routes that show sessions list) and a failure of the server.
    static let generalErrors: [APIError.Kind] = [
        .badRequest, .requestTimeout, .bodyTooLarge, .uriTooLong, .headersTooLarge, .internalError, .notImplemented,
        .tooManyConnections, .responseTimeout, .shuttingDown, .httpVersionNotSupported,
    ]

    /// The shared response of each status only the general answers give, by the name operations refer to.
    static func generalResponses(_ settings: Settings) -> JSONObject {
        var byStatus: [Int: [RouteAnswer]] = [:]
        for answer in generalAnswers(settings) { byStatus[answer.status, default: []].append(answer) }
        var responses = JSONObject()
        for status in byStatus.keys.sorted() {
            responses[generalResponseName(status)] = errorResponse(byStatus[status]!)
        }
        return responses
    }

    /// The component name of a general status's response.
    static func generalResponseName(_ status: Int) -> String {
        switch status {
        case 400: "BadRequest"
        case 408: "RequestTimeout"
        case 413: "ContentTooLarge"
        case 414: "URITooLong"
        case 429: "RateLimited"
        case 431: "HeadersTooLarge"
        case 500: "InternalError"
        case 501: "NotImplemented"
        case 503: "ServiceUnavailable"
        case 505: "HTTPVersionNotSupported"
        default: "Status\(status)"
        }
    }
}

extension OpenAPIDocument.Schemas {
    /// The answers of a route's access check: 401 without a valid credential, 403 without the right.
    func accessAnswers(_ access: RouteAccess) -> [RouteAnswer] {
        let jwtRefused = RouteAnswer.error(.unauthorized, "The JWT is missing, malformed, expired or badly signed.")
        switch (access, settings.access) {
        case (.admin, _):
            return [.error(.unauthorized, "The admin bearer token is missing or wrong.")]
        case (.session, .token):
            return [
                .error(
                    .unauthorized,
                    "The session's token is missing or wrong (the same answer whether the session exists or not).")
            ]
        case (.session, .jwt):
            return [jwtRefused, .error(.forbidden, "The JWT does not grant this right on this session.")]
        case (.createSession, .jwt), (.eachSession, .jwt):
            return [jwtRefused]
        default:
            return []
        }
    }

    /// The security requirement of a route, nil for routes anyone may call.
    func security(for access: RouteAccess) -> JSONValue? {
        switch (access, settings.access) {
        case (.admin, _): return [JSONValue.members([("adminToken", [])])]
        case (.session, .token):
            return [JSONValue.members([("sessionToken", [])]), JSONValue.members([("sessionTokenQuery", [])])]
        case (.session, .jwt), (.createSession, .jwt), (.eachSession, .jwt):
            return [JSONValue.members([("sessionJWT", [])]), JSONValue.members([("sessionJWTQuery", [])])]
        default: return nil
        }
    }

    /// The credentials this server asks for: the admin token, and the session credential of its access mode.
    func securitySchemes() -> JSONObject {
        var schemes = JSONObject([
            (
                "adminToken",
                JSONValue.members([
                    ("type", "http"), ("scheme", "bearer"),
                    (
                        "description",
                        .string(
                            "The admin token: REACTOR_ADMIN_TOKEN, admin.token or admin.tokenFile; "
                                + "generated and printed to standard error at start when none is set.")
                    ),
                ])
            )
        ])
        let query =
            "The same credential as the query parameter access_token, "
            + "for clients that cannot set headers (EventSource)."
        switch settings.access {
        case .open: break
        case .token:
            schemes["sessionToken"] = .members([
                ("type", "http"), ("scheme", "bearer"),
                (
                    "description",
                    "The session's capability token, returned once by POST /sessions (and by the admin token route)."
                ),
            ])
            schemes["sessionTokenQuery"] = .members([
                ("type", "apiKey"), ("in", "query"), ("name", "access_token"), ("description", .string(query)),
            ])
        case .jwt:
            schemes["sessionJWT"] = .members([
                ("type", "http"), ("scheme", "bearer"), ("bearerFormat", "JWT"),
                (
                    "description",
                    .string(
                        "An HS256 JWT from the app's backend: exp, nbf, "
                            + "sessions (ids; prefix* matches a prefix) and rights (create, read, act, delete)."
                    )
                ),
            ])
            schemes["sessionJWTQuery"] = .members([
                ("type", "apiKey"), ("in", "query"), ("name", "access_token"), ("description", .string(query)),
            ])
        }
        return schemes
    }
}
