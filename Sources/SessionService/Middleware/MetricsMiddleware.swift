/// Counts every answer by route and status (`reactor_http_requests_total` at `GET /metrics`).
struct MetricsMiddleware: ServiceMiddleware {
    let metrics: ServiceMetrics

    var handlesRequests: Bool { false }
    var observesAnswers: Bool { true }

    func answered(_ exchange: Exchange, status: Int) {
        metrics.countRequest(route: exchange.route, status: status)
    }
}
