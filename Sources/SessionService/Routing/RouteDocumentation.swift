/// What a row of ``Route/table`` says about its route for `/openapi.json`: a summary, the parameters it
/// reads, the body it takes and every answer it gives. Path parameters come from the pattern; the answers
/// every route can get (the HTTP server's own, rate limits, access checks) are added from the
/// configuration when the document is built (`OpenAPIDocument`).
public struct RouteDocumentation: Sendable {
    /// One line: what the route does.
    public let summary: String
    /// Query and header parameters the route reads.
    public let parameters: [RouteParameter]
    /// The request body it takes, if any.
    public let body: RoutePayload?
    /// Its own answers: successes and the errors its responder gives.
    public let answers: [RouteAnswer]

    /// What a row of the table declared without documentation gets: no summary and no answers of its own.
    public static let undocumented = RouteDocumentation("", answers: [])

    /// A route's documentation: `summary`, then what it reads and how it answers: `answers` (successes, and
    /// errors given only in some configurations or said more exactly here), then the `errors` it can give.
    public init(
        _ summary: String, parameters: [RouteParameter] = [], body: RoutePayload? = nil, answers: [RouteAnswer],
        errors: [APIError.Kind] = []
    ) {
        self.summary = summary
        self.parameters = parameters
        self.body = body
        self.answers = answers + errors.map { RouteAnswer.error($0) }
    }

    /// The errors of every route on one session (`{id}`): it may be unknown, unreadable or damaged.
    public static let onSession: [APIError.Kind] = [.unknownSession, .sessionUnavailable, .storageUnavailable]
    /// The errors of every route that reads a JSON object body.
    public static let onJSONObject: [APIError.Kind] = [.invalidJSON, .bodyNotObject, .unsupportedMediaType]
}

/// A query or header parameter a route reads, with its exact schema (`OpenAPIDocument` writes them).
public enum RouteParameter: String, Sendable, CaseIterable {
    /// `?wait=true` on actions: answer once the action's mutations are reduced.
    case wait
    /// `?select=/pointer` on event streams: one part of the state.
    case select
    /// `?delta=json-patch` on event streams: RFC 6902 patches after the first state.
    case delta
    /// `Last-Event-ID` on event streams: resume after this version.
    case lastEventID
    /// `?sessions=a,b,c` on the stream of many sessions.
    case sessions
    /// `Last-Event-ID` on the stream of many sessions: a cursor it sent.
    case streamCursor
    /// `?since=SEQ` on the action log.
    case since
    /// `?limit=N` on the action log.
    case limit
    /// `?session=ID` on the page (read by its script, not by the server).
    case session
    /// `?reactor=NAME` on `/openapi.json`: the document for one reactor.
    case reactor
    /// `?scope=local` on the admin session list: only this instance's resident sessions.
    case scope
    /// `?access_token=t1,t2,…` on the stream of many sessions in token mode: one token per session.
    case sessionTokens
}

/// A body a route takes or answers with; `OpenAPIDocument` gives each its media type and schema.
public enum RoutePayload: String, Sendable {
    /// Answers: pages, health, metrics, this document, the reactor list.
    case html, svg, health, metrics, openAPI, reactors
    /// Answers of the session routes.
    case session, createdSession, actionAccepted, actionReduced, eventStream, sessionsEventStream
    /// Answers of the admin routes.
    case adminSessions, actionLog, stubFlag, forcedState, stateAtVersion, sessionToken, timers
    /// No body (204).
    case empty
    /// Request bodies: a new session, an action, the stub flag, a forced state, a fork.
    case newSession, action, stubRequest, state, forkRequest
}

/// One answer a route gives: a success with its body, or an API error with its code.
public struct RouteAnswer: Sendable {
    /// The status code.
    public let status: Int
    /// The error code (`unknown_session`), nil for a success.
    public let code: String?
    /// When the answer comes (an error) or what it holds (a success).
    public let meaning: String
    /// The success body.
    public let payload: RoutePayload?
    /// Headers the answer always carries, by name, with what they hold.
    public let headers: [(name: String, meaning: String)]
    /// The configuration under which the route can give it.
    public let condition: RouteCondition

    /// A success answer with `payload` (and the headers it always carries).
    public static func success(
        _ status: Int, _ payload: RoutePayload, _ meaning: String, headers: [(name: String, meaning: String)] = [],
        when condition: RouteCondition = .always
    ) -> RouteAnswer {
        RouteAnswer(
            status: status, code: nil, meaning: meaning, payload: payload, headers: headers, condition: condition)
    }

    /// An error answer, `{"error": {"code": …, "message": …}}`: its status, code, meaning and headers from the
    /// vocabulary (``APIError/Kind``); `meaning` says it more exactly where the route knows more.
    public static func error(
        _ kind: APIError.Kind, _ meaning: String? = nil, when condition: RouteCondition = .always
    ) -> RouteAnswer {
        let row = kind.row
        return RouteAnswer(
            status: row.status, code: row.code, meaning: meaning ?? row.description, payload: nil, headers: row.headers,
            condition: condition)
    }

    /// The same answer, given only under `condition`.
    public func when(_ condition: RouteCondition) -> RouteAnswer {
        RouteAnswer(
            status: status, code: code, meaning: meaning, payload: payload, headers: headers, condition: condition)
    }
}

/// A setting an answer depends on: the document lists the answer only where the server can give it.
public enum RouteCondition: Sendable {
    /// Whatever the configuration.
    case always
    /// `storage.memoryOnly`.
    case memoryOnly
    /// `auth.sessions=token`.
    case tokenMode
    /// Any `auth.sessions` other than `token`.
    case notTokenMode
    /// `auth.reactors` names the reactors that may be created, `auth.clientChosenIDs` is false, or
    /// `auth.sessions=jwt` (whose tokens may lack `create`).
    case creationRestricted
    /// `limits.sessionsPerMinute` above 0.
    case sessionRateLimit
    /// `limits.actionBytesPerMinute` above 0.
    case actionByteLimit
    /// A hosted reactor (of those the document shows) was registered with middlewares of its own.
    case reactorMiddlewares
}
