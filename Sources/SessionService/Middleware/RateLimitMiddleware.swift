/// Lets each client address spend requests from a token bucket; past it, 429 `rate_limited` with
/// `Retry-After`. Used for the request rate of every route (`limits.requestsPerSecond`) and, with its
/// own buckets, for session creation (`limits.sessionsPerMinute`). Exempt addresses (loopback by
/// default: local development, the benchmarks) are never counted.
struct RateLimitMiddleware: ServiceMiddleware {
    let buckets: TokenBuckets
    let resolver: ClientAddressResolver
    let exempt: [IPNetwork]
    /// What is limited and by which settings, for the error message.
    let what: String
    let settings: String

    func handle(_ exchange: Exchange, next: MiddlewareNext) {
        guard let client = exchange.limitedClient(resolvedBy: resolver, exempt: exempt),
            let wait = buckets.take(client)
        else { return next(exchange) }
        let seconds = max(1, Int(wait.rounded(.up)))
        exchange.fail(
            APIError(
                .rateLimited, "too many \(what) from \(client) (\(settings)); retry in \(seconds) s",
                headers: [("Retry-After", String(seconds))]))
    }
}
