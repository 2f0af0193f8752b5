import Logs

/// Writes one log line per answered request: method, route, status and microseconds
/// (`log.accessLog`). Only in the chain when enabled, so a disabled access log costs nothing.
struct AccessLogMiddleware: ServiceMiddleware {
    let logger: Logger
    let clock: any ServiceClock

    func handle(_ exchange: Exchange, next: MiddlewareNext) {
        exchange.started = clock.monotonicNanoseconds()
        next(exchange)
    }

    var observesAnswers: Bool { true }

    func answered(_ exchange: Exchange, status: Int) {
        let micros = (clock.monotonicNanoseconds() &- exchange.started) / 1000
        logger.info(
            "request",
            [
                "method": .string(exchange.method), "route": .string(exchange.route?.label ?? "unmatched"),
                "status": .int(status), "micros": .int(Int(micros)),
            ])
    }
}
