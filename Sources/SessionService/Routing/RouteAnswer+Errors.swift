/// Every error answer of the API, by code: what rows of ``Route/table`` list and `/openapi.json` explains.
extension RouteAnswer {
    // MARK: Bodies and queries

    static let invalidJSON = error(400, "invalid_json", "The body is not JSON (or nests deeper than the JSON reader allows).")
    static let bodyNotObject = error(400, "invalid_request", "The body is JSON but not an object, or it names no reactor.")
    static let invalidID = error(400, "invalid_id", "The chosen id is not 1 to 64 characters from A-Z, a-z, 0-9, _ and -.")
    static let invalidQuery = error(400, "invalid_query", "A query parameter is outside its documented range or values.")
    static let invalidSelect = error(400, "invalid_select", "select is not an RFC 6901 JSON pointer.")
    static let invalidSessions = error(400, "invalid_sessions", "sessions= is missing or empty, names more sessions than sse.maxSessionsPerStream, or names one twice.")
    static let invalidVersion = error(400, "invalid_version", "The version in the path is not a non-negative integer.")
    static let unsupportedMediaType = error(415, "unsupported_media_type", "The body was not sent as Content-Type: application/json (or application/*+json).")
    static let actionTooLarge = error(413, "action_too_large", "The action, encoded again as it decoded, is larger than one journal record holds; nothing was accepted.")

    // MARK: What the request names

    static let unknownReactor = error(404, "unknown_reactor", "No hosted reactor has this name (GET /reactors lists them).")
    static let unknownSession = error(404, "unknown_session", "No session has this id (or it was deleted while the request was in progress).")
    static let unknownVersion = error(404, "unknown_version", "The session has not reached this version yet.")
    static let sessionExists = error(409, "session_exists", "A session with this id exists already.")
    static let sessionUnavailable = error(
        409, "session_unavailable",
        "The session is quarantined: its stored history is damaged or no longer decodes, or its reactor crashed "
            + "the server on it (the message says why, where, or what crashed); release a crashed one once a fixed "
            + "reactor is deployed, fork it at an earlier version, or DELETE it to start over.")
    static let stubDisabled = error(409, "stub_disabled", "States can be forced only while stub mode is on.")
    static let memoryOnly = error(409, "memory_only", "Time travel and forks need the journal; this server runs with storage.memoryOnly.", when: .memoryOnly)
    static let notTokenMode = error(409, "not_token_mode", "Sessions are not guarded by tokens here (auth.sessions is not token).", when: .notTokenMode)
    static let versionGone = error(
        410, "version_gone",
        "The version is older than the retained history (storage.historyVersions and storage.historyBytes with the "
            + "file journal, the latest trim on NATS); the message names the oldest version retained.")
    static let forbidden = error(
        403, "forbidden",
        """
        This reactor may not be created here (auth.reactors), the request names an id where the server picks them \
        (auth.clientChosenIDs), or the JWT does not grant create on this id.
        """,
        when: .creationRestricted)

    // MARK: Actions and states

    static let unknownAction = error(422, "unknown_action", "The body is not an object with a string \"type\" naming an action of the session's reactor.")
    static let invalidAction = error(422, "invalid_action", "The payload does not decode as the action's case (a member missing or of the wrong type, an integer outside its type's range or written inexactly); the message names the member.")
    static let invalidState = error(422, "invalid_state", "The body does not decode as the reactor's state.")
    static let invalidBodyMember = error(422, "invalid_request", "A member the body needs is missing or of the wrong type.")
    static let stateTooLarge = error(422, "state_too_large", "The state would be larger than sessions.maxStateBytes of JSON; it was not applied and the session is unchanged.")
    static let stateNotEncodable = error(422, "state_not_encodable", "The state has no JSON form (a NaN, say); it was not applied and the session is unchanged.")
    /// Its code is the middleware's own (an empty code here: the document allows any).
    static let refusedByReactor = error(
        422, "",
        """
        A middleware the reactor was registered with refused the action, or a state it or the forced state \
        would produce; the code and message are that middleware's. Nothing was applied.
        """,
        when: .reactorMiddlewares)
    static let timeout = error(504, "timeout", "The action was accepted, but its mutations were not all reduced within sessions.waitTimeoutSeconds; it keeps running.")

    // MARK: Capacity and storage

    static let storageUnavailable = error(
        503, "storage_unavailable",
        "The journal cannot be written (a change is refused, and so is a read that would show a change not stored "
            + "yet), or this stored session cannot be read from it right now, or (several instances on NATS) what the "
            + "answer showed can never be stored because another instance took the session over meanwhile; nothing "
            + "acknowledged is lost, retry.")
    static let tooManySessions = error(503, "too_many_sessions", "The server holds its limit of sessions (sessions.limit).")
    static let sessionPassivated = error(503, "session_passivated", "The session left memory twice while the request was in progress; retry.")
    static let tooManySubscribers = error(
        503, "too_many_subscribers",
        """
        The session, the server or this client address has its limit of subscribers (sse.maxSubscribersPerSession, \
        sse.maxSubscribers, sse.maxSubscribersPerAddress); retry later.
        """,
        headers: [("Retry-After", "Seconds to wait before trying again.")])
    static let shuttingDown = error(503, "shutting_down", "The server is shutting down: it stopped accepting work, and what is still unanswered at http.shutdownDeadlineSeconds gets this.")
    static let rateLimited = error(
        429, "rate_limited",
        """
        Too many requests (limits.requestsPerSecond), new sessions (limits.sessionsPerMinute) or bytes of actions \
        (limits.actionBytesPerMinute) from this client address.
        """,
        headers: [("Retry-After", "Seconds until the client may try again.")])

    /// The answers of every route on one session (`{id}`): it may be unknown, unreadable or damaged.
    static let onSession: [RouteAnswer] = [unknownSession, sessionUnavailable, storageUnavailable]
    /// The answers of every route that reads a JSON object body.
    static let onJSONObject: [RouteAnswer] = [invalidJSON, bodyNotObject, unsupportedMediaType]
}
