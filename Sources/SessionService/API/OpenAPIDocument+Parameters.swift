import JSONCodec

// The parameters operations refer to by name (`#/components/parameters/…`).
extension OpenAPIDocument.Schemas {
    /// The parameters operations refer to, each with its exact schema: those of paths, of actions and streams, and
    /// of listings and pages.
    func parameters() -> JSONObject {
        JSONObject(Self.pathParameters + streamParameters + listingParameters)
    }

    /// A parameter in `location` (`path`, `query`, `header`); a path parameter is always required.
    static func parameter(
        _ name: String, in location: String, _ schema: JSONSchema, _ description: String, required: Bool = false
    ) -> JSONValue {
        .members([
            ("name", .string(name)), ("in", .string(location)),
            ("required", required || location == "path" ? true : nil), ("description", .string(description)),
            ("schema", schema.json),
        ])
    }

    /// A session's id, a version and a timer's name, as paths carry them.
    static var pathParameters: [(String, JSONValue)] {
        [
            ("id", parameter("id", in: "path", Self.id, "The session's id.")),
            ("version", parameter("version", in: "path", .unsigned(), "A version of the session.")),
            (
                "name",
                parameter(
                    "name", in: "path", .string(),
                    "A pending timer's name, as the reactor scheduled it (percent-encoded in the path).")
            ),
        ]
    }

    /// How an action is answered and what a stream sends: `wait`, `select`, `delta`, the resume cursors and the
    /// multiplexed stream's list of sessions.
    var streamParameters: [(String, JSONValue)] {
        [
            // The server reads the words and their one-digit and bare (`?wait`) forms;
            // anything else is 400 invalid_query.
            (
                RouteParameter.wait.rawValue,
                Self.parameter(
                    "wait", in: "query", JSONSchema.enumeration(["true", "false", "1", "0", ""]),
                    "true (or 1, or a bare wait): answer once every mutation of the action is reduced "
                        + "(504 timeout after sessions.waitTimeoutSeconds); "
                        + "false (or 0) or left out: answer 202 once queued."
                )
            ),
            (
                RouteParameter.select.rawValue,
                Self.parameter(
                    "select", in: "query", Self.jsonPointer,
                    """
                    An RFC 6901 JSON pointer: stream only that part of the state, sent when it changes (data is the \
                    selected value; absent: null). Pulses only of that part: pulse p (editor.alert for one of a nested \
                    struct) when the pointer is /p (/editor/alert), encloses it (/editor) or lies inside it.
                    """)
            ),
            (
                RouteParameter.delta.rawValue,
                Self.parameter(
                    "delta", in: "query", JSONSchema.enumeration(["json-patch"]),
                    "json-patch: after the first state (and after a skipped version or a resume, "
                        + "which are whole states again) each new version comes as event: patch, "
                        + "its data the RFC 6902 JSON Patch that turns the state "
                        + "(with select, the selected value) of the stream's event before into this version's.")
            ),
            (
                RouteParameter.lastEventID.rawValue,
                Self.parameter(
                    "Last-Event-ID", in: "header", .string(),
                    "Resume: the current state is sent only if its version is above this one, or below it "
                        + "(a version the session never showed: an earlier session with this id was deleted); "
                        + "anything that is not a version is ignored.")
            ),
            (
                RouteParameter.sessions.rawValue,
                .members([
                    ("name", "sessions"), ("in", "query"), ("required", true), ("style", "form"), ("explode", false),
                    (
                        "description",
                        .string(
                            "The sessions to follow, comma-separated: 1 to sse.maxSessionsPerStream ids, none twice.")
                    ),
                    (
                        "schema",
                        JSONSchema.array(Self.id, minItems: 1, maxItems: settings.maxSessionsPerStream).adding(
                            "uniqueItems", true
                        ).json
                    ),
                ])
            ),
            (
                RouteParameter.streamCursor.rawValue,
                Self.parameter(
                    "Last-Event-ID", in: "header", .string(),
                    "Resume: a cursor this stream sent; every session resumes after it, except one created again under "
                        + "its id since (it starts from its current state); anything else is ignored.")
            ),
        ]
    }

    /// Paging an action log, the page's session, the document's reactor, the multiplexed stream's tokens and the
    /// admin listing's scope.
    var listingParameters: [(String, JSONValue)] {
        [
            (
                RouteParameter.since.rawValue,
                Self.parameter("since", in: "query", .unsigned(), "Only entries with a seq above this (default 0).")
            ),
            (
                RouteParameter.limit.rawValue,
                Self.parameter(
                    "limit", in: "query", JSONSchema.integer(minimum: 1, maximum: 100_000).adding("default", 1000),
                    "At most this many entries.")
            ),
            (
                RouteParameter.session.rawValue,
                Self.parameter(
                    "session", in: "query", .string(), "A session id for the page to open (read by the page's script).")
            ),
            (
                RouteParameter.reactor.rawValue,
                Self.parameter(
                    "reactor", in: "query", .enumeration(hosted.map(JSONValue.string)),
                    "Describe sessions of this reactor only.")
            ),
            (
                RouteParameter.sessionTokens.rawValue,
                .members([
                    ("name", "access_token"), ("in", "query"), ("required", false), ("style", "form"),
                    ("explode", false),
                    (
                        "description",
                        .string(
                            "auth.sessions=token: one token per session of sessions=, in the same order, "
                                + "comma-separated (or the same list as Authorization: Bearer t1,t2,…). "
                                + "Any text is taken: a part whose token is missing or wrong ends as unauthorized, "
                                + "exactly as an unknown session's does."
                        )
                    ),
                    ("schema", JSONSchema.array(.string()).json),
                ])
            ),
            (
                RouteParameter.scope.rawValue,
                Self.parameter(
                    "scope", in: "query", .enumeration(["local"]),
                    "local: only the sessions resident on this instance "
                        + "(with storage.backend=nats, the list otherwise covers every instance)."
                )
            ),
        ]
    }
}
