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
}
