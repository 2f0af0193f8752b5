/// The `code` of an API error body `{"error": {"code", "message"}}` or of an `event: error`, as a Swift value.
///
/// ```swift
/// catch ReactorClientError.server(_, .unknownSession, let message) { show(message) }
/// ```
/// Codes this client does not know arrive as `.other("the_code")`, so a newer server never breaks it.
public enum ServerErrorCode: Sendable, Hashable {
    /// Sessions and actions: the codes of `POST /sessions`, `GET /sessions/{id}`, `POST …/actions`.
    case unknownReactor, unknownSession, sessionExists, invalidID, tooManySessions
    case invalidJSON, unknownAction, invalidAction, invalidRequest, invalidQuery, invalidSelect
    /// `POST /sessions` with params its reactor does not decode (or takes none).
    case invalidParams
    case bodyTooLarge, unsupportedMediaType, timeout, notFound, methodNotAllowed
    /// Limits: too many requests or new sessions from one address (429), too many streams (503).
    case rateLimited, tooManySubscribers
    /// Access (`auth.sessions` token and jwt modes, the admin token).
    case unauthorized, forbidden
    /// Admin: stub mode, forced states, time travel and forks.
    case stubDisabled, invalidState, invalidVersion, unknownVersion, versionGone, memoryOnly
    /// Sessions and servers that cannot serve.
    case sessionUnavailable, storageUnavailable, internalError
    /// Ends of an event stream (`event: error`): the client reconnects with `Last-Event-ID`.
    case sessionMoved, sessionPassivated, subscriberTooSlow
    /// A code this client has no case for.
    case other(String)

    private static let names: [(ServerErrorCode, String)] = [
        (.unknownReactor, "unknown_reactor"), (.unknownSession, "unknown_session"), (.sessionExists, "session_exists"),
        (.invalidID, "invalid_id"), (.tooManySessions, "too_many_sessions"), (.invalidJSON, "invalid_json"),
        (.unknownAction, "unknown_action"), (.invalidAction, "invalid_action"), (.invalidRequest, "invalid_request"),
        (.invalidParams, "invalid_params"),
        (.invalidQuery, "invalid_query"), (.invalidSelect, "invalid_select"), (.bodyTooLarge, "body_too_large"),
        (.unsupportedMediaType, "unsupported_media_type"), (.timeout, "timeout"), (.notFound, "not_found"),
        (.methodNotAllowed, "method_not_allowed"), (.rateLimited, "rate_limited"),
        (.tooManySubscribers, "too_many_subscribers"),
        (.unauthorized, "unauthorized"),
        (.forbidden, "forbidden"), (.stubDisabled, "stub_disabled"), (.invalidState, "invalid_state"),
        (.invalidVersion, "invalid_version"), (.unknownVersion, "unknown_version"), (.versionGone, "version_gone"),
        (.memoryOnly, "memory_only"), (.sessionUnavailable, "session_unavailable"),
        (.storageUnavailable, "storage_unavailable"), (.internalError, "internal_error"),
        (.sessionMoved, "session_moved"),
        (.sessionPassivated, "session_passivated"), (.subscriberTooSlow, "subscriber_too_slow"),
    ]
    private static let byName = Dictionary(uniqueKeysWithValues: names.map { ($0.1, $0.0) })

    /// The code for its wire name (`unknown_session` → `.unknownSession`).
    public init(rawValue: String) {
        self = Self.byName[rawValue] ?? .other(rawValue)
    }

    /// The wire name, as the server writes it.
    public var rawValue: String {
        if case .other(let name) = self { return name }
        return Self.names.first { $0.0 == self }!.1
    }
}

extension ServerErrorCode: CustomStringConvertible {
    /// The wire name.
    public var description: String { rawValue }
}
