/// Lets only requests carrying the admin bearer token through (every `/admin/…` route); the rest get
/// 401 `unauthorized` with `WWW-Authenticate`.
struct AdminAuthMiddleware: ServiceMiddleware {
    let authenticator: AdminAuthenticator

    func handle(_ exchange: Exchange, next: MiddlewareNext) {
        guard authenticator.isAuthorized(authorization: exchange.request.headers["Authorization"]) else {
            return exchange.fail(.unauthorized)
        }
        next(exchange)
    }
}
