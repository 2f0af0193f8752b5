import JSONCodec

/// Cross-origin access for browsers (`cors.allowedOrigins`): answers a request from an allowed origin
/// with `Access-Control-Allow-Origin`, and answers preflight (`OPTIONS`) requests itself.
struct CORSMiddleware: ServiceMiddleware {
    let origins: Set<String>
    let allowsAny: Bool

    init(allowedOrigins: [String]) {
        origins = Set(allowedOrigins)
        allowsAny = origins.contains("*")
    }

    /// Whether any origin is allowed at all (else the middleware is left out of every chain).
    var isEnabled: Bool { !origins.isEmpty }

    func allows(_ origin: String) -> Bool { allowsAny || origins.contains(origin) }

    func handle(_ exchange: Exchange, next: MiddlewareNext) {
        if let origin = exchange.request.headers["Origin"], allows(origin) {
            exchange.answerHeaders.append(("Access-Control-Allow-Origin", allowsAny ? "*" : origin))
            exchange.answerHeaders.append(("Vary", "Origin"))
        }
        next(exchange)
    }

    /// Answers `OPTIONS` on a path whose routes accept `methods`: 204 with `Allow`, and for an allowed
    /// origin the preflight headers; a disallowed origin gets 403 `origin_not_allowed`.
    static func preflight(_ exchange: Exchange, methods: [String], policy: CORSMiddleware?) {
        let allow = (methods + (methods.contains("GET") ? ["HEAD"] : []) + ["OPTIONS"]).joined(separator: ", ")
        guard let origin = exchange.request.headers["Origin"] else {
            return exchange.reply(204, body: [], contentType: nil, headers: [("Allow", allow)])
        }
        guard let policy, policy.allows(origin) else {
            let refusal = "origin \(JSONWriter.quoted(origin)) is not in cors.allowedOrigins"
            return exchange.fail(APIError(.originNotAllowed, refusal))
        }
        exchange.reply(
            204, body: [], contentType: nil,
            headers: [
                ("Allow", allow),
                ("Access-Control-Allow-Methods", allow),
                ("Access-Control-Allow-Headers", "Content-Type, Authorization, Last-Event-ID"),
                ("Access-Control-Max-Age", "600"),
            ])
    }
}
