import JSONCodec

extension OpenAPIDocument {
    /// What any route can answer, whatever it does: the HTTP server's own answers (``HTTPRejection``, in the
    /// API's error shape, each closing the connection), the request rate limit, and a failure of the server.
    static func generalAnswers(_ settings: Settings) -> [RouteAnswer] {
        var answers: [RouteAnswer] = [
            .error(400, "bad_request", "The request is malformed: its request line, a header field or its framing, or its Host (missing in HTTP/1.1, repeated, not host[:port], or disagreeing with an absolute-form target)."),
            .error(408, "request_timeout", "The request head did not arrive within http.headTimeoutSeconds, or its body stalled for http.bodyTimeoutSeconds."),
            .error(413, "body_too_large", "The body is larger than http.maxBodyBytes (the JSON reader has the same limit, so this is the only answer to size)."),
            .error(414, "uri_too_long", "The request line is longer than http.maxRequestLineBytes."),
            .error(431, "headers_too_large", "The header block is larger than http.maxHeaderBytes, or has more than http.maxHeaderCount fields."),
            .error(500, "internal_error", "The server failed to handle the request; the cause is logged."),
            .error(501, "not_implemented", "The body uses a transfer coding other than chunked."),
            .error(503, "too_many_connections", "The server holds http.maxConnections connections, or this client address http.maxConnectionsPerAddress."),
            .error(503, "response_timeout", "The route did not answer in time."),
            .error(503, "shutting_down", "The server reached its shutdown deadline (http.shutdownDeadlineSeconds) before answering."),
            .error(505, "http_version_not_supported", "The request is not HTTP/1.0 or HTTP/1.1."),
        ]
        if settings.requestRateLimit { answers.append(.rateLimited) }
        return answers
    }

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
        let challenge = [(name: "WWW-Authenticate", meaning: "Bearer, with the realm of the credential asked for.")]
        switch (access, settings.access) {
        case (.admin, _):
            return [.error(401, "unauthorized", "The admin bearer token is missing or wrong.", headers: challenge)]
        case (.session, .token):
            return [.error(401, "unauthorized", "The session's token is missing or wrong (the same answer whether the session exists or not).", headers: challenge)]
        case (.session, .jwt):
            return [
                .error(401, "unauthorized", "The JWT is missing, malformed, expired or badly signed.", headers: challenge),
                .error(403, "forbidden", "The JWT does not grant this right on this session."),
            ]
        case (.createSession, .jwt), (.eachSession, .jwt):
            return [.error(401, "unauthorized", "The JWT is missing, malformed, expired or badly signed.", headers: challenge)]
        default:
            return []
        }
    }

    /// The security requirement of a route, nil for routes anyone may call.
    func security(for access: RouteAccess) -> JSONValue? {
        switch (access, settings.access) {
        case (.admin, _): return [JSONValue.members([("adminToken", [])])]
        case (.session, .token): return [JSONValue.members([("sessionToken", [])]), JSONValue.members([("sessionTokenQuery", [])])]
        case (.session, .jwt), (.createSession, .jwt), (.eachSession, .jwt): return [JSONValue.members([("sessionJWT", [])]), JSONValue.members([("sessionJWTQuery", [])])]
        default: return nil
        }
    }

    /// The credentials this server asks for: the admin token, and the session credential of its access mode.
    func securitySchemes() -> JSONObject {
        var schemes = JSONObject([("adminToken", JSONValue.members([
            ("type", "http"), ("scheme", "bearer"),
            ("description", "The admin token: REACTOR_ADMIN_TOKEN, admin.token or admin.tokenFile; generated and printed to standard error at start when none is set."),
        ]))])
        let query = "The same credential as the query parameter access_token, for clients that cannot set headers (EventSource)."
        switch settings.access {
        case .open: break
        case .token:
            schemes["sessionToken"] = .members([("type", "http"), ("scheme", "bearer"), ("description", "The session's capability token, returned once by POST /sessions (and by the admin token route).")])
            schemes["sessionTokenQuery"] = .members([("type", "apiKey"), ("in", "query"), ("name", "access_token"), ("description", .string(query))])
        case .jwt:
            schemes["sessionJWT"] = .members([("type", "http"), ("scheme", "bearer"), ("bearerFormat", "JWT"), ("description", "An HS256 JWT from the app's backend: exp, nbf, sessions (ids; prefix* matches a prefix) and rights (create, read, act, delete).")])
            schemes["sessionJWTQuery"] = .members([("type", "apiKey"), ("in", "query"), ("name", "access_token"), ("description", .string(query))])
        }
        return schemes
    }
}
