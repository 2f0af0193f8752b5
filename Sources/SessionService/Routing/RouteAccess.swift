import Tokens

/// Who may call a route, declared with it in ``Route/table``; the service puts the matching access
/// middleware in front of the route.
public enum RouteAccess: Sendable, Equatable {
    /// Anyone: the pages (the admin console asks for the token itself), the icon, health, metrics, the API
    /// description, the reactor list.
    case open
    /// The admin bearer token.
    case admin
    /// `POST /sessions`: whoever may create sessions (the id, if chosen, is in the body).
    case createSession
    /// A route on the session named in the path, needing this right on it.
    case session(SessionRight)
    /// A route on several sessions named in its query (`GET /events?sessions=…`), needing this right on
    /// each: the route checks every session itself (one refused ends only its part); in jwt mode the
    /// token is verified before it (401 for the whole request).
    case eachSession(SessionRight)
}
