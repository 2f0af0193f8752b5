/// The routing table: every route in one row, with its responder. Adding a route is a case of ``Route``
/// (its name), one row here and one function in the file of its group (`Routes/SessionRoutes.swift`,
/// `ActionRoutes`, `EventRoutes`, `AdminRoutes`, `TimeTravelRoutes`, `OperationRoutes`, `TimerRoutes`).
extension Route {
    /// Answers a request of the route for the service: one function of `Routes/`, called once the route's
    /// middleware let the request through and what the route needs (``RouteNeeds``) is at hand.
    typealias Responder = @Sendable (ReactorService, Exchange) -> Void

    /// One row of the routing table: method, path pattern (`{id}` is a parameter), route, access, what it
    /// needs, what `/openapi.json` says of it, and its responder.
    public struct Entry: Sendable {
        public let method: String
        public let pattern: String
        public let route: Route
        public let access: RouteAccess
        /// Whether it shows a session, and whether it may wait on storage off the event loop.
        public let needs: RouteNeeds
        /// Its summary, parameters, body and answers.
        public let documentation: RouteDocumentation
        /// Answers the route's requests once its chain let them through (`Route.Responder`).
        let responder: Responder
        let segments: [Segment]

        /// A row; a route declared without `documentation` still appears in `/openapi.json` (with the
        /// answers every route can give), and `OpenAPIDocumentTests` fails until it is documented.
        init(
            _ method: String, _ pattern: String, _ route: Route, _ access: RouteAccess, _ needs: RouteNeeds,
            _ documentation: RouteDocumentation = .undocumented, responder: @escaping Responder
        ) {
            self.method = method
            self.pattern = pattern
            self.route = route
            self.access = access
            self.needs = needs
            self.documentation = documentation
            self.responder = responder
            segments = pattern.split(separator: "/").map { part in
                part.hasPrefix("{") ? .parameter : .literal(Array(part.utf8))
            }
        }
    }

    /// The routing table, in the order of ``Route``'s cases (its chains and metrics rows are indexed so), which
    /// is the order the README and `/openapi.json` list it.
    public static let table: [Entry] = [
        Entry(
            "GET", "/", .page, .open, .noSession,
            RouteDocumentation(
                "A page to try the service in a browser; ?session=ID opens that session.", parameters: [.session],
                answers: [.success(200, .html, "The page.")])
        ) { $0.servePage($1) },
        Entry(
            "GET", "/favicon.ico", .favicon, .open, .noSession,
            RouteDocumentation(
                "The pages' icon.", answers: [.success(200, .svg, "An SVG image.")])
        ) { $0.serveFavicon($1) },
        Entry(
            "GET", "/healthz", .health, .open, .noSession,
            RouteDocumentation(
                "Whether the server accepts work, for load balancers.",
                answers: [.success(200, .health, "The server accepts work.")],
                errors: [.storageUnavailable, .shuttingDown])
        ) { $0.answerHealth($1) },
        Entry(
            "GET", "/metrics", .metrics, .open, .noSession,
            RouteDocumentation(
                "Prometheus metrics: requests by route and status, sessions, subscribers, actions, states, drops, "
                    + "reduce latency.",
                answers: [.success(200, .metrics, "Prometheus text exposition format 0.0.4.")])
        ) { $0.serveMetrics($1) },
        Entry(
            "GET", "/openapi.json", .openAPI, .open, .noSession,
            RouteDocumentation(
                "This description of the API; ?reactor=NAME narrows it to one reactor's sessions "
                    + "(its actions, states and creation).",
                parameters: [.reactor], answers: [.success(200, .openAPI, "An OpenAPI 3.1 document.")],
                errors: [.invalidQuery, .unknownReactor])
        ) { $0.serveOpenAPI($1) },
        Entry(
            "GET", "/reactors", .reactors, .open, .noSession,
            RouteDocumentation(
                "Every hosted reactor type, with its initial state, description and example actions.",
                answers: [.success(200, .reactors, "The hosted reactors.")])
        ) { $0.listReactors($1) },
        Entry(
            "POST", "/sessions", .createSession, .createSession, .storageRoundTrips,
            RouteDocumentation(
                "Create a session of a reactor, with an id of the client's choosing or one the server picks.",
                body: .newSession,
                answers: [
                    .success(
                        201, .createdSession, "The new session at version 0.",
                        headers: [("Location", "The session's path: /sessions/{id}.")]),
                    .error(
                        .forbidden,
                        "This reactor may not be created here (auth.reactors), "
                            + "the request names an id where the server picks them "
                            + "(auth.clientChosenIDs), or the JWT does not grant create on this id.",
                        when: .creationRestricted),
                    .error(.rateLimited, when: .sessionRateLimit),
                ],
                errors: [
                    .invalidID, .unknownReactor, .invalidParams, .sessionExists, .storageUnavailable, .tooManySessions,
                ]
                    + RouteDocumentation.onJSONObject)
        ) { $0.createSession($1) },
        Entry(
            "GET", "/sessions/{id}", .getSession, .session(.read), .session,
            RouteDocumentation(
                "A session's current version and state.", answers: [.success(200, .session, "The session.")],
                errors: RouteDocumentation.onSession)
        ) { $0.getSession($1) },
        Entry(
            "DELETE", "/sessions/{id}", .deleteSession, .session(.delete), .storageRoundTrips,
            RouteDocumentation(
                "Delete a session: its effects are cancelled, its subscribers get event: end, its records are erased.",
                answers: [.success(204, .empty, "Deleted.")], errors: RouteDocumentation.onSession)
        ) { $0.deleteSession($1) },
        Entry(
            "POST", "/sessions/{id}/actions", .postAction, .session(.act), .session,
            RouteDocumentation(
                "Send an action: 202 once it is queued (in order), "
                    + "or with wait=true 200 once every mutation it produced is reduced.",
                parameters: [.wait], body: .action,
                answers: [
                    .success(202, .actionAccepted, "Accepted: queued for the session's reactor."),
                    .success(
                        200, .actionReduced,
                        "With wait=true: every mutation of the action is reduced; the state after them."),
                    .error(.rateLimited, when: .actionByteLimit),
                    .error(.refusedByReactor, when: .reactorMiddlewares),
                ],
                errors: [
                    .invalidJSON, .invalidQuery, .actionTooLarge, .unsupportedMediaType, .unknownAction, .invalidAction,
                    .stateTooLarge, .stateNotEncodable, .sessionPassivated, .sessionBusy, .timeout,
                ] + RouteDocumentation.onSession)
        ) { $0.postAction($1) },
        Entry(
            "GET", "/sessions/{id}/events", .events, .session(.read), .session,
            RouteDocumentation(
                "The session's states as Server-Sent Events: the current state, then each new one "
                    + "(id: version), pulses right after the state that assigned them, event: end when it is deleted, "
                    + "event: error before the server closes a stream it cannot keep "
                    + "(code unauthorized once the credential that opened it lapses: "
                    + "its token replaced, its JWT past exp plus the leeway).",
                parameters: [.select, .delta, .lastEventID],
                answers: [
                    .success(
                        200, .eventStream,
                        "An event stream (it stays open; HEAD gets its head alone, without subscribing).",
                        headers: [("Cache-Control", "no-cache")])
                ],
                errors: [.invalidSelect, .invalidDelta, .tooManySubscribers] + RouteDocumentation.onSession)
        ) { $0.subscribe($1) },
        // One stream, many sessions: the route checks each session of `sessions=` (its part ends if refused).
        Entry(
            "GET", "/events", .multiplexedEvents, .eachSession(.read), .storageRoundTrips,
            RouteDocumentation(
                "The events of several sessions over one stream: each session's current state, then its new ones; "
                    + "every data names its session, every id: is one cursor for the whole stream, "
                    + "event: end ends one session's part (deleted, unknown_session, "
                    + "unauthorized: also once its token is replaced or the JWT passes exp plus the leeway) "
                    + "and the stream stays open while any part is live.",
                parameters: [.sessions, .select, .delta, .streamCursor, .sessionTokens],
                answers: [
                    .success(
                        200, .sessionsEventStream,
                        "An event stream (it stays open; HEAD gets its head alone, without subscribing).",
                        headers: [("Cache-Control", "no-cache")])
                ],
                errors: [.invalidSessions, .invalidID, .invalidSelect, .invalidDelta, .tooManySubscribers])
        ) { $0.subscribeMany($1) },
        // The console page holds no secret: the operator types the admin token into it.
        Entry(
            "GET", "/admin/console", .adminConsole, .open, .noSession,
            RouteDocumentation(
                "The admin console page: sessions, live state, action log, stub mode, time travel, fork. "
                    + "It asks for the admin token and sends it only in Authorization headers; "
                    + "in the open access mode its session list follows the listed sessions "
                    + "over one GET /events stream.",
                answers: [.success(200, .html, "The page.")])
        ) { $0.serveConsole($1) },
        Entry(
            "GET", "/admin/sessions", .adminSessions, .admin, .residentSessions,
            RouteDocumentation(
                "Every session with its version, subscribers (their queued bytes, last id, drops) and stub flag; "
                    + "with storage.backend=nats, those of every instance, "
                    + "each resident one with the instance it runs on.",
                parameters: [.scope],
                answers: [.success(200, .adminSessions, "The sessions, in memory first, then those only stored.")],
                errors: [.invalidQuery])
        ) { $0.adminSessions($1) },
        Entry(
            "GET", "/admin/sessions/{id}/actions", .adminActions, .admin, .session,
            RouteDocumentation(
                "The session's action log, oldest first: entries with seq above since, at most limit of them.",
                parameters: [.since, .limit],
                answers: [.success(200, .actionLog, "Log entries; next when more remain.")],
                errors: [.invalidQuery] + RouteDocumentation.onSession)
        ) { $0.adminActions($1) },
        Entry(
            "PUT", "/admin/sessions/{id}/stub", .adminStub, .admin, .session,
            RouteDocumentation(
                "Turn stub mode on or off: while on, actions are recorded and neither mutate nor reduce runs "
                    + "(the current state is kept).",
                body: .stubRequest, answers: [.success(200, .stubFlag, "The stub flag now.")],
                errors: [.invalidBodyMember] + RouteDocumentation.onJSONObject + RouteDocumentation.onSession)
        ) { $0.adminStub($1) },
        Entry(
            "PUT", "/admin/sessions/{id}/state", .adminState, .admin, .session,
            RouteDocumentation(
                "Force a state (stub mode only); it is emitted to subscribers as a new version.", body: .state,
                answers: [
                    .success(200, .forcedState, "The forced state and its version."),
                    .error(.refusedByReactor, when: .reactorMiddlewares),
                ],
                errors: [
                    .invalidJSON, .unsupportedMediaType, .stubDisabled, .invalidState, .stateTooLarge,
                    .stateNotEncodable,
                ] + RouteDocumentation.onSession)
        ) { $0.adminState($1) },
        Entry(
            "GET", "/admin/sessions/{id}/versions/{version}", .adminVersion, .admin, .session,
            RouteDocumentation(
                "Time travel: the state at a past version, replayed from the nearest snapshot at or below it. "
                    + "Reach: with the file journal, every session's newest storage.historyVersions versions "
                    + "(100 by default) within storage.historyBytes of records (1 MiB), "
                    + "kept through compaction and restarts for as long as the session exists, "
                    + "and older versions until compaction deletes their segments; "
                    + "on NATS (storage.backend=nats), every version since the session's latest trim "
                    + "(once its subject holds more than 2,048 messages, "
                    + "the session writes a checkpoint and what came before it is deleted), "
                    + "whatever the two settings say.",
                answers: [
                    .success(200, .stateAtVersion, "The state at that version."),
                    .error(.memoryOnly, when: .memoryOnly),
                ],
                errors: [.invalidVersion, .unknownVersion, .versionGone] + RouteDocumentation.onSession)
        ) { $0.adminVersion($1) },
        Entry(
            "POST", "/admin/sessions/{id}/fork", .adminFork, .admin, .storageRoundTrips,
            RouteDocumentation(
                "Fork a new session from a past version (any version time travel reaches): "
                    + "its state is the source's at that version, and its version starts there.",
                body: .forkRequest,
                answers: [
                    .success(
                        201, .createdSession, "The new session.",
                        headers: [("Location", "The new session's path: /sessions/{id}.")]),
                    .error(.memoryOnly, when: .memoryOnly),
                ],
                errors: [
                    .invalidID, .invalidBodyMember, .stateTooLarge, .unknownVersion, .versionGone, .sessionExists,
                    .tooManySessions,
                ] + RouteDocumentation.onJSONObject + RouteDocumentation.onSession)
        ) { $0.adminFork($1) },
        Entry(
            "POST", "/admin/sessions/{id}/token", .adminSessionToken, .admin, .session,
            RouteDocumentation(
                "Replace a session's capability token (auth.sessions=token); "
                    + "the old one stops working at once, and the event streams opened with it end "
                    + "(unauthorized) on every instance.",
                answers: [
                    .success(200, .sessionToken, "The new token, shown only here.", when: .tokenMode),
                    .error(.notTokenMode, when: .notTokenMode),
                ],
                errors: RouteDocumentation.onSession)
        ) { $0.replaceSessionToken($1) },
        Entry(
            "POST", "/admin/sessions/{id}/release", .adminRelease, .admin, .storageRoundTrips,
            RouteDocumentation(
                "Release a session a crash of its reactor quarantined (after deploying a fixed reactor): "
                    + "it is loaded now and its crash records are deleted; "
                    + "if it still cannot be served it stays quarantined (a new crash quarantines it again).",
                answers: [
                    .success(200, .session, "It loads: its version and state."), .error(.memoryOnly, when: .memoryOnly),
                ],
                errors: RouteDocumentation.onSession)
        ) { $0.adminRelease($1) },
        Entry(
            "GET", "/admin/sessions/{id}/timers", .adminTimers, .admin, .session,
            RouteDocumentation(
                "The session's pending timers (its reactor's Effect.schedule), soonest first: "
                    + "each fires once, as an ordinary action marked \"timer\" in the action log, "
                    + "also after a passivation, a restart or kill -9.",
                answers: [.success(200, .timers, "The pending timers.")],
                errors: RouteDocumentation.onSession)
        ) { $0.adminTimers($1) },
        Entry(
            "DELETE", "/admin/sessions/{id}/timers/{name}", .adminCancelTimer, .admin, .session,
            RouteDocumentation(
                "Cancel a pending timer of the session (journaled: it does not fire after a restart either).",
                answers: [.success(204, .empty, "Cancelled.")],
                errors: [.unknownTimer] + RouteDocumentation.onSession)
        ) { $0.adminCancelTimer($1) },
    ]
}
