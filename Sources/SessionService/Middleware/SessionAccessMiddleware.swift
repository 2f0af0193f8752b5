import JSONCodec
import Tokens

/// Lets a request reach a session route only with the access the configured mode requires
/// (`auth.sessions`): in `token` mode the session's capability token, checked in constant time
/// against its stored hash (an unknown id is checked against nothing with the same work, so the
/// answer — 401 either way — cannot tell the two apart); in `jwt` mode a valid HS256 token (401
/// otherwise) that grants the route's right on that session (403 otherwise). `POST /sessions` in
/// jwt mode only verifies the token here and leaves it on the exchange: the id it may create is in
/// the body, which the route reads.
struct SessionAccessMiddleware: ServiceMiddleware {
    let mode: SessionAccessMode
    /// The right the route needs; nil for `POST /sessions` (checked by the route with the chosen id).
    let right: SessionRight?
    /// The stored token hash of a session, nil when there is no such session (token mode).
    let tokenHash: @Sendable (String) -> SessionTokenHash?
    let clock: any ServiceClock

    func handle(_ exchange: Exchange, next: MiddlewareNext) {
        switch mode {
        case .open: return next(exchange)
        // Creating a session needs no token in token mode: the answer carries the new session's.
        case .token where right == nil: return next(exchange)
        case .token, .jwt: break
        }
        let presented: String?
        do {
            presented = try BearerCredential.presented(by: exchange.request)
        } catch {
            return exchange.fail(error)
        }
        switch mode {
        case .open:
            next(exchange)
        case .token:
            let stored = tokenHash(exchange.id)
            guard SessionTokenHash.verify(presented: presented, against: stored) else {
                return exchange.fail(.sessionUnauthorized(exchange.id, presented: presented != nil))
            }
            exchange.matchedTokenHash = stored
            next(exchange)
        case .jwt(let verifier):
            guard let presented else { return exchange.fail(.sessionUnauthorized(exchange.id, presented: false)) }
            let claims: JWTClaims
            do {
                claims = try verifier.verify(presented, now: Double(clock.wallNanoseconds()) / 1e9)
            } catch {
                let refusal = "the bearer token is not accepted: \(error.message)"
                return exchange.fail(APIError(.unauthorized, refusal, headers: APIError.sessionChallenge))
            }
            if let right, let refusal = claims.refusal(right: right, sessionID: exchange.id) {
                return exchange.fail(APIError(.forbidden, refusal))
            }
            exchange.claims = claims
            next(exchange)
        }
    }
}

extension APIError {
    /// `WWW-Authenticate` of session routes.
    static let sessionChallenge = [("WWW-Authenticate", "Bearer realm=\"reactor-server sessions\"")]

    /// 401 for a session route: the same answer whether the session exists or not.
    static func sessionUnauthorized(_ id: String, presented: Bool) -> APIError {
        // A route on several sessions (`/events`) names none in its path.
        if id.isEmpty {
            return APIError(
                .unauthorized,
                "this request needs a token: Authorization: Bearer <token>, or ?access_token=<token> for EventSource",
                headers: sessionChallenge)
        }
        return APIError(
            .unauthorized,
            presented
                ? "the token does not grant access to session \(JSONWriter.quoted(id))"
                : "session \(JSONWriter.quoted(id)) needs its token: Authorization: Bearer <token>, "
                    + "or ?access_token=<token> for EventSource",
            headers: sessionChallenge)
    }
}
