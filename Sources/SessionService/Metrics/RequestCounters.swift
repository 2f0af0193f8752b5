/// Requests answered, by route and status: one lock-free counter per (route, status) pair, so
/// counting costs an atomic add on every request.
final class RequestCounters: Sendable {
    /// Statuses the service answers with; anything else counts under its own "other" slot.
    static let statuses = [
        200, 201, 202, 204, 400, 401, 403, 404, 405, 408, 409, 410, 413, 414, 415, 422, 431, 500, 501, 503, 504, 505,
    ]
    /// Rows: every route, then "unmatched". Columns: `statuses`, then other.
    private let counters: [Counter]

    init() {
        counters = (0..<(Route.allCases.count + 1) * (Self.statuses.count + 1)).map { _ in Counter() }
    }

    @inline(__always)
    static func column(_ status: Int) -> Int {
        statuses.firstIndex(of: status) ?? statuses.count
    }

    /// How many routes there are (the row of unmatched requests).
    static let routeCount = Route.allCases.count

    static func row(_ route: Route?) -> Int {
        route?.index ?? routeCount
    }

    func count(route: Route?, status: Int) {
        counters[Self.row(route) * (Self.statuses.count + 1) + Self.column(status)].increment()
    }

    func value(route: Route?, status: Int) -> Int {
        counters[Self.row(route) * (Self.statuses.count + 1) + Self.column(status)].value
    }

    /// Every non-zero (route label, status label, count), routes in table order.
    func samples() -> [(route: String, status: String, count: Int)] {
        var result: [(String, String, Int)] = []
        let routes: [Route?] = Route.allCases.map(Optional.some) + [nil]
        for (row, route) in routes.enumerated() {
            for column in 0...Self.statuses.count {
                let count = counters[row * (Self.statuses.count + 1) + column].value
                guard count > 0 else { continue }
                result.append(
                    (
                        route?.label ?? "unmatched",
                        column < Self.statuses.count ? String(Self.statuses[column]) : "other", count
                    ))
            }
        }
        return result
    }
}
