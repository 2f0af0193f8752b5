import HTTPServer

/// One request being answered: the request, its writer, the matched route, and the helpers that
/// render JSON answers with CORS headers, count them in metrics and write the access log.
final class Exchange: Sendable {
    let request: HTTPRequest
    let writer: HTTPResponseWriter
    // Strong: an exchange lives for one request, and every `unowned` read costs a runtime call
    // (three per request, measured); nothing the service holds keeps an exchange.
    let service: ReactorService
    let method: String
    let started: UInt64
    /// Set once routed; unrouted requests count under "unmatched".
    nonisolated(unsafe) var route: Route?

    init(request: consuming HTTPRequest, writer: HTTPResponseWriter, service: ReactorService) {
        self.request = request
        self.writer = writer
        self.service = service
        method = request.methodName
        started = service.accessLog ? service.context.clock.monotonicNanoseconds() : 0
    }

    var routeLabel: String { route?.label ?? "unmatched" }

    /// Answers with a JSON body.
    func reply(_ status: Int, json: [UInt8], headers: [(String, String)] = []) {
        reply(status, body: json, contentType: Self.jsonContentType, headers: headers)
    }

    /// Answers with an API error.
    func fail(_ error: APIError) {
        reply(error.status, json: error.body, headers: error.headers)
    }

    func reply(_ status: Int, body: [UInt8], contentType: String?, headers extra: [(String, String)] = []) {
        let cors = corsHeaders()
        let headers: HTTPHeaders
        if extra.isEmpty, cors.isEmpty, contentType == Self.jsonContentType {
            // Most answers: shared headers, no array to build per request.
            headers = Self.jsonHeaders
        } else {
            var fields: [HTTPHeaders.Element] = []
            fields.reserveCapacity(extra.count + 1 + cors.count)
            for (name, value) in extra { fields.append((name, value)) }
            if let contentType { fields.append(("Content-Type", contentType)) }
            for (name, value) in cors { fields.append((name, value)) }
            headers = HTTPHeaders(fields)
        }
        writer.respond(status: status, headers: headers, body: body)
        finished(status)
    }

    static let jsonContentType = "application/json; charset=utf-8"
    /// The headers of a JSON answer without CORS or extra headers.
    static let jsonHeaders = HTTPHeaders(constant: [("Content-Type", jsonContentType)])

    /// CORS response headers when the request came from an allowed origin.
    func corsHeaders() -> [(String, String)] {
        let cors = service.cors
        guard cors.isEnabled, let origin = request.headers["Origin"], cors.allows(origin) else { return [] }
        return [("Access-Control-Allow-Origin", cors.allowsAny ? "*" : origin), ("Vary", "Origin")]
    }

    /// Counts the answer and writes the access-log line.
    func finished(_ status: Int) {
        service.metrics.countRequest(route: route, status: status)
        if service.accessLog {
            let micros = (service.context.clock.monotonicNanoseconds() &- started) / 1000
            service.logger.info("request", ["method": .string(method), "route": .string(routeLabel), "status": .int(status), "micros": .int(Int(micros))])
        }
    }
}
