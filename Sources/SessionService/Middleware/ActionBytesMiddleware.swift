/// Lets each client address send `limits.actionBytesPerMinute` bytes of actions per minute, over all its
/// sessions, from a token bucket counted in bytes (a minute's worth at once); past it, 429 `rate_limited`
/// with `Retry-After`. Every accepted action is kept in its session's action log (in memory and in
/// storage), so this bounds how fast one client can make the server hold more, whatever the number of
/// sessions it creates. Exempt addresses are never counted.
struct ActionBytesMiddleware: ServiceMiddleware {
    let buckets: TokenBuckets
    let resolver: ClientAddressResolver
    let exempt: [IPNetwork]
    let metrics: ServiceMetrics

    func handle(_ exchange: Exchange, next: MiddlewareNext) {
        let bytes = exchange.request.body.count
        guard bytes > 0, let client = exchange.limitedClient(resolvedBy: resolver, exempt: exempt),
            let wait = buckets.take(client, cost: Double(bytes))
        else { return next(exchange) }
        metrics.actionsRefusedForBytes.increment()
        let seconds = max(1, Int(wait.rounded(.up)))
        let budget = Int(buckets.burst)
        exchange.fail(
            APIError(
                .rateLimited,
                "too many bytes of actions from \(client): \(budget) per minute (limits.actionBytesPerMinute); "
                    + "this action's \(bytes) fit in \(seconds) s",
                headers: [("Retry-After", String(seconds))]))
    }
}
