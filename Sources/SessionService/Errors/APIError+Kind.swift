/// The API's one vocabulary of errors: every error it answers, by name, with its status, its code and what it
/// means. ``APIError`` takes its status and code from here (call sites name a kind and give only their message),
/// the rows of ``Route/table`` list the kinds their routes answer, and `/openapi.json` describes each from here.
/// A code may have two kinds when it comes with two statuses (`invalid_request`); one kind has no code of its
/// own (``refusedByReactor``: the code is that of the reactor's middleware, the document allows any).
extension APIError {
    public enum Kind: Sendable, CaseIterable {
        // Bodies and queries
        case invalidJSON, bodyNotObject, invalidID, invalidQuery, invalidSelect, invalidDelta, invalidSessions
        case invalidVersion
        case unsupportedMediaType, actionTooLarge, bodyTooLarge
        // What the request names
        case notFound, methodNotAllowed, unknownReactor, unknownSession, unknownVersion, unknownTimer
        case sessionExists, sessionUnavailable, stubDisabled, memoryOnly, notTokenMode, versionGone
        // Access
        case unauthorized, forbidden, originNotAllowed
        // Actions and states
        case unknownAction, invalidAction, invalidState, invalidBodyMember, stateTooLarge, stateNotEncodable
        case invalidParams
        case refusedByReactor, timeout
        // Capacity, storage and the server itself
        case storageUnavailable, tooManySessions, sessionPassivated, tooManySubscribers, rateLimited
        case tooManyConnections, shuttingDown, responseTimeout, internalError
        // What the HTTP server refuses by itself
        case badRequest, requestTimeout, uriTooLong, headersTooLarge, notImplemented, httpVersionNotSupported

        /// The kind's row: status, code, meaning, and the headers its answers always carry.
        public var row: Row {
            switch self {
            case .invalidJSON:
                Row(400, "invalid_json", "The body is not JSON (or nests deeper than the JSON reader allows).")
            case .bodyNotObject:
                Row(400, "invalid_request", "The body is JSON but not an object, or it names no reactor.")
            case .invalidID:
                Row(400, "invalid_id", "The chosen id is not 1 to 64 characters from A-Z, a-z, 0-9, _ and -.")
            case .invalidQuery:
                Row(400, "invalid_query", "A query parameter is outside its documented range or values.")
            case .invalidSelect:
                Row(400, "invalid_select", "select is not an RFC 6901 JSON pointer.")
            case .invalidDelta:
                Row(400, "invalid_delta", "delta is not json-patch, the one delta the server makes.")
            case .invalidSessions:
                Row(
                    400, "invalid_sessions",
                    "sessions= is missing or empty, names more sessions than sse.maxSessionsPerStream, or names one "
                        + "twice.")
            case .invalidVersion:
                Row(400, "invalid_version", "The version in the path is not a non-negative integer.")
            case .unsupportedMediaType:
                Row(
                    415, "unsupported_media_type",
                    "The body was not sent as Content-Type: application/json (or application/*+json).")
            case .actionTooLarge:
                Row(
                    413, "action_too_large",
                    "The action, encoded again as it decoded, is larger than one journal record holds; nothing was "
                        + "accepted.")
            case .bodyTooLarge:
                Row(
                    413, "body_too_large",
                    "The body is larger than http.maxBodyBytes (the JSON reader has the same limit, so this is the "
                        + "only answer to size).")
            case .notFound:
                Row(404, "not_found", "No route serves this path (GET /openapi.json lists them).")
            case .methodNotAllowed:
                Row(
                    405, "method_not_allowed", "The path is served, but not with this method.",
                    headers: [("Allow", "The methods the path is served with.")])
            case .unknownReactor:
                Row(404, "unknown_reactor", "No hosted reactor has this name (GET /reactors lists them).")
            case .unknownSession:
                Row(
                    404, "unknown_session",
                    "No session has this id (or it was deleted while the request was in progress).")
            case .unknownVersion:
                Row(404, "unknown_version", "The session has not reached this version yet.")
            case .unknownTimer:
                Row(
                    404, "unknown_timer",
                    "The session has no pending timer with this name (it fired, or was cancelled).")
            case .sessionExists:
                Row(409, "session_exists", "A session with this id exists already.")
            case .sessionUnavailable:
                Row(
                    409, "session_unavailable",
                    "The session is quarantined: its stored history is damaged or no longer decodes, or its reactor "
                        + "crashed the server on it (the message says why, where, or what crashed); release a crashed "
                        + "one once a fixed reactor is deployed, fork it at an earlier version, or DELETE it to start "
                        + "over.")
            case .stubDisabled:
                Row(409, "stub_disabled", "States can be forced only while stub mode is on.")
            case .memoryOnly:
                Row(
                    409, "memory_only",
                    "Time travel and forks need the journal; this server runs with storage.memoryOnly.")
            case .notTokenMode:
                Row(409, "not_token_mode", "Sessions are not guarded by tokens here (auth.sessions is not token).")
            case .versionGone:
                Row(
                    410, "version_gone",
                    "The version is older than the retained history (storage.historyVersions and storage.historyBytes "
                        + "with the file journal, the latest trim on NATS); the message names the oldest version "
                        + "retained.")
            case .unauthorized:
                Row(
                    401, "unauthorized",
                    "The credential the route asks for is missing or wrong: the admin token on admin routes, the "
                        + "session's token or a JWT on session routes (auth.sessions).",
                    headers: [("WWW-Authenticate", "Bearer, with the realm of the credential asked for.")])
            case .forbidden:
                Row(
                    403, "forbidden",
                    "The credential is valid but does not allow this: the JWT lacks the right on this session, or "
                        + "POST /sessions may not create this reactor or this id here.")
            case .originNotAllowed:
                Row(403, "origin_not_allowed", "A preflight request comes from an origin not in cors.allowedOrigins.")
            case .unknownAction:
                Row(
                    422, "unknown_action",
                    "The body is not an object with a string \"type\" naming an action of the session's reactor.")
            case .invalidAction:
                Row(
                    422, "invalid_action",
                    "The payload does not decode as the action's case (a member missing or of the wrong type, an "
                        + "integer outside its type's range or written inexactly); the message names the member.")
            case .invalidState:
                Row(422, "invalid_state", "The body does not decode as the reactor's state.")
            case .invalidParams:
                Row(
                    422, "invalid_params",
                    "\"params\" do not decode as the reactor's parameters (a member missing or of the wrong type or "
                        + "range; the message names it), are over 64 KiB as JSON, or were given to a reactor that "
                        + "takes none.")
            case .invalidBodyMember:
                Row(422, "invalid_request", "A member the body needs is missing or of the wrong type.")
            case .stateTooLarge:
                Row(
                    422, "state_too_large",
                    "The state would be larger than sessions.maxStateBytes of JSON; it was not applied and the session "
                        + "is unchanged.")
            case .stateNotEncodable:
                Row(
                    422, "state_not_encodable",
                    "The state has no JSON form (a NaN, say); it was not applied and the session is unchanged.")
            case .refusedByReactor:
                Row(
                    422, "",
                    "A middleware the reactor was registered with refused the action, or a state it or the forced "
                        + "state would produce; the code and message are that middleware's. Nothing was applied.")
            case .timeout:
                Row(
                    504, "timeout",
                    "The action was accepted, but its mutations were not all reduced within "
                        + "sessions.waitTimeoutSeconds; it keeps running.")
            case .storageUnavailable:
                Row(
                    503, "storage_unavailable",
                    "The journal cannot be written (a change is refused, and so is a read that would show a change not "
                        + "stored yet), or this stored session cannot be read from it right now, or (several "
                        + "instances on NATS) what the answer showed can never be stored because another instance "
                        + "took the session over meanwhile; nothing acknowledged is lost, retry.")
            case .tooManySessions:
                Row(503, "too_many_sessions", "The server holds its limit of sessions (sessions.limit).")
            case .sessionPassivated:
                Row(
                    503, "session_passivated",
                    "The session left memory twice while the request was in progress; retry.")
            case .tooManySubscribers:
                Row(
                    503, "too_many_subscribers",
                    "The session, the server or this client address has its limit of subscribers "
                        + "(sse.maxSubscribersPerSession, sse.maxSubscribers, sse.maxSubscribersPerAddress); retry "
                        + "later.",
                    headers: [("Retry-After", "Seconds to wait before trying again.")])
            case .rateLimited:
                Row(
                    429, "rate_limited",
                    "Too many requests (limits.requestsPerSecond), new sessions (limits.sessionsPerMinute) or bytes of "
                        + "actions (limits.actionBytesPerMinute) from this client address.",
                    headers: [("Retry-After", "Seconds until the client may try again.")])
            case .tooManyConnections:
                Row(
                    503, "too_many_connections",
                    "The server holds http.maxConnections connections, or this client address "
                        + "http.maxConnectionsPerAddress.")
            case .shuttingDown:
                Row(
                    503, "shutting_down",
                    "The server is shutting down: it stopped accepting work, and what is still unanswered at "
                        + "http.shutdownDeadlineSeconds gets this.")
            case .responseTimeout:
                Row(503, "response_timeout", "The route did not answer in time.")
            case .internalError:
                Row(500, "internal_error", "The server failed to handle the request; the cause is logged.")
            case .badRequest:
                Row(
                    400, "bad_request",
                    "The request is malformed: its request line, a header field or its framing, or its Host (missing "
                        + "in HTTP/1.1, repeated, not host[:port], or disagreeing with an absolute-form target).")
            case .requestTimeout:
                Row(
                    408, "request_timeout",
                    "The request head did not arrive within http.headTimeoutSeconds, or its body stalled for "
                        + "http.bodyTimeoutSeconds.")
            case .uriTooLong:
                Row(414, "uri_too_long", "The request line is longer than http.maxRequestLineBytes.")
            case .headersTooLarge:
                Row(
                    431, "headers_too_large",
                    "The header block is larger than http.maxHeaderBytes, or has more than http.maxHeaderCount fields.")
            case .notImplemented:
                Row(
                    501, "not_implemented",
                    "No route of this server serves the method, or the body uses a transfer coding other than "
                        + "chunked.")
            case .httpVersionNotSupported:
                Row(505, "http_version_not_supported", "The request is not HTTP/1.0 or HTTP/1.1.")
            }
        }

        /// The status it is answered with.
        public var status: Int { row.status }
        /// The machine-readable code in `{"error": {"code": …}}` (empty for ``refusedByReactor``: any code).
        public var code: String { row.code }
    }

    /// One row of the vocabulary.
    public struct Row: Sendable {
        /// The status it is answered with.
        public let status: Int
        /// The code in the body.
        public let code: String
        /// When it is answered, for `/openapi.json`.
        public let description: String
        /// Headers its answers always carry, by name, with what they hold.
        public let headers: [(name: String, meaning: String)]

        init(_ status: Int, _ code: String, _ description: String, headers: [(name: String, meaning: String)] = []) {
            self.status = status
            self.code = code
            self.description = description
            self.headers = headers
        }
    }
}
