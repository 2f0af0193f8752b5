/// The claims of a verified JWT and the decisions the access middleware takes from them.
///
/// ``JWTVerifier/verify(_:now:)`` returns these only after the signature has matched and the times have
/// been checked, so claims from it mean the token was valid at the `now` it was verified for. (The public
/// initializer is for tests and clients that describe a token; it checks nothing.)
///
/// ```swift
/// let claims = try verifier.verify(bearer, now: clock.unixSeconds)
/// if let refusal = claims.refusal(right: .act, sessionID: id) { return .forbidden(refusal) }   // 403
/// ```
public struct JWTClaims: Sendable, Equatable {
    /// `exp`, Unix seconds (fractions allowed).
    public var expiresAt: Double
    /// `nbf`, Unix seconds, when present.
    public var notBefore: Double?
    /// `iat`, Unix seconds, when present.
    public var issuedAt: Double?
    /// `sub`, when present: who the app's backend minted the token for (for the access log).
    public var subject: String?
    /// `sessions`: the ids, prefixes and wildcards the token covers, in claim order.
    public var sessions: [SessionPattern]
    /// `rights`: what the token allows on those sessions.
    public var rights: Set<SessionRight>

    /// Claims as given; the verifier checks them, this initializer does not.
    public init(
        expiresAt: Double, notBefore: Double? = nil, issuedAt: Double? = nil, subject: String? = nil,
        sessions: [SessionPattern], rights: Set<SessionRight>
    ) {
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.issuedAt = issuedAt
        self.subject = subject
        self.sessions = sessions
        self.rights = rights
    }

    /// Whether the token allows `right` on the session `sessionID`; a nil id stands for one the server will
    /// choose (`POST /sessions` without `"id"`), which only the entry `*` covers.
    public func allows(right: SessionRight, sessionID: String?) -> Bool {
        refusal(right: right, sessionID: sessionID) == nil
    }

    /// Why the token does not allow `right` on `sessionID` (the message of a 403 `forbidden`), or nil when it does.
    public func refusal(right: SessionRight, sessionID: String?) -> String? {
        guard rights.contains(right) else {
            let granted = SessionRight.allCases.filter(rights.contains).map(\.rawValue)
            let list = granted.isEmpty ? "no rights" : "only " + granted.joined(separator: ", ")
            return "the token does not grant \(right) (it grants \(list))"
        }
        guard let sessionID else {
            if sessions.contains(.any) { return nil }
            return
                "a server-chosen id needs the entry \"*\" in the token's sessions; "
                + "name the id in the request or mint a token with \"*\""
        }
        if sessions.contains(where: { $0.matches(sessionID) }) { return nil }
        return "the token's sessions do not cover this session"
    }
}
