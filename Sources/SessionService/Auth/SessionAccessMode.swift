import Tokens

/// Who may use a session (`auth.sessions`, API.md's "Access to sessions").
public enum SessionAccessMode: Sendable {
    /// The configuration's spelling.
    public enum Kind: String, Sendable, CaseIterable {
        case open, token, jwt
    }

    /// Anyone who knows a session's id (local development).
    case open
    /// The capability token `POST /sessions` returned for that session.
    case token
    /// An HS256 JSON Web Token from the app's backend naming the session and the right.
    case jwt(JWTVerifier)

    public var kind: Kind {
        switch self {
        case .open: .open
        case .token: .token
        case .jwt: .jwt
        }
    }
}
