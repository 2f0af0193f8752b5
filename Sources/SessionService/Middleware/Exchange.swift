import Dispatch
import HTTPServer
import Tokens

/// One request being answered: the request, its writer, the matched route, and the helpers that render
/// JSON answers. Middleware adds headers to every answer (`answerHeaders`) and learns each answer's
/// status through the chain the exchange ran in.
///
/// One thread at a time works on an exchange (its loop, or the worker it moved to), so the fields every
/// request reads skip the run-time exclusivity check a class's `var` gets (~76 instructions per access).
final class Exchange: Sendable {
    let request: HTTPRequest
    /// The client's connection; nil for a request another instance forwarded (``forwarded``).
    let writer: HTTPResponseWriter?
    /// Where the answer goes when another instance forwarded the request (it checked access): back to that
    /// instance, through the same call a connection's writer answers with.
    let forwarded: (any ExchangeReplyChannel)?
    let method: String
    /// Set once routed; unrouted requests count under "unmatched".
    @exclusivity(unchecked) nonisolated(unsafe) var route: Route?
    /// The `{id}` of the route's path, percent-decoded; empty when it has none.
    @exclusivity(unchecked) nonisolated(unsafe) var id = ""
    /// The chain running this exchange (set when it starts), told of the answer.
    @exclusivity(unchecked) nonisolated(unsafe) var chain: MiddlewareChain?
    /// Headers every answer of this exchange carries, added by middleware (CORS).
    @exclusivity(unchecked) nonisolated(unsafe) var answerHeaders: [(String, String)] = []
    /// The verified JWT of the request (jwt access mode), for routes that check it further.
    nonisolated(unsafe) var claims: JWTClaims?
    /// The stored hash the request's token matched (token access mode), for streams ended when it is replaced.
    nonisolated(unsafe) var matchedTokenHash: SessionTokenHash?
    /// When the exchange started, monotonic nanoseconds; set by the access log only.
    nonisolated(unsafe) var started: UInt64 = 0
    /// Set once the exchange moved off its event loop to a worker (its session is loaded over the network).
    nonisolated(unsafe) var onWorker = false
    /// The client the per-client limits count this request under, once the first of them worked it out
    /// (`.some(nil)`: none, the client is exempt or unknown); see ``limitedClient(resolvedBy:exempt:)``.
    nonisolated(unsafe) private var limitedClient: IPAddress??
    /// The storage position the answer shows, which must be durable before it leaves; nil (the usual
    /// case) for everything stored when it is sent, 0 for an answer that shows nothing stored.
    @exclusivity(unchecked) nonisolated(unsafe) var dependsOn: UInt64?

    init(request: consuming HTTPRequest, writer: HTTPResponseWriter) {
        self.request = request
        self.writer = writer
        forwarded = nil
        method = request.methodName
    }

    /// A request another instance forwarded: its answer goes back through `channel` (which holds it until
    /// what it shows is durable, as the output barrier holds a connection's answer).
    init(forwarded request: HTTPRequest, channel: any ExchangeReplyChannel) {
        self.request = request
        writer = nil
        forwarded = channel
        method = request.methodName
    }

    /// The client the per-client limits count this request under: found by `resolver` (behind trusted
    /// proxies, the forwarded one), nil when in `exempt` or unknown (an in-process or forwarded request).
    /// Worked out once, for every limit that asks (request rate, action bytes, subscribers): they all
    /// pass the service's one resolver and exemptions.
    func limitedClient(resolvedBy resolver: ClientAddressResolver, exempt: [IPNetwork]) -> IPAddress? {
        if let limitedClient { return limitedClient }
        let client = resolver.client(of: request).flatMap { exempt.contains($0) ? nil : $0 }
        limitedClient = .some(client)
        return client
    }

    /// Whether another instance forwarded this request (it is never forwarded again).
    var isForwarded: Bool { forwarded != nil }

    /// Answers with a JSON body, ended by a newline so a terminal does not run it into the prompt.
    func reply(_ status: Int, json: [UInt8], headers: [(String, String)] = []) {
        var body = json
        // Builders reserve room for it: no copy in the common case.
        body.append(UInt8(ascii: "\n"))
        reply(status, body: body, contentType: Self.jsonContentType, headers: headers)
    }

    /// Answers with an API error.
    func fail(_ error: APIError) {
        reply(error.status, json: error.body, headers: error.headers)
    }

    func reply(_ status: Int, body: [UInt8], contentType: String?, headers extra: [(String, String)] = []) {
        let headers: HTTPHeaders
        if extra.isEmpty, answerHeaders.isEmpty, contentType == Self.jsonContentType {
            // Most answers: shared headers, no array to build per request.
            headers = Self.jsonHeaders
        } else {
            var fields: [HTTPHeaders.Element] = []
            fields.reserveCapacity(extra.count + 1 + answerHeaders.count)
            for (name, value) in extra { fields.append((name, value)) }
            if let contentType { fields.append(("Content-Type", contentType)) }
            for (name, value) in answerHeaders { fields.append((name, value)) }
            headers = HTTPHeaders(fields)
        }
        let acknowledgesChange = acknowledgesChange(status)
        if let writer {
            writer.respond(
                status: status, headers: headers, body: body, dependingOn: dependsOn,
                refusedUnlessStored: acknowledgesChange)
        } else {
            forwarded?.respond(
                status: status, headers: headers, body: body, dependingOn: dependsOn,
                refusedUnlessStored: acknowledgesChange)
        }
        finished(status)
    }

    /// Answers with a small JSON body (its newline included) the caller holds as bytes for the call: on the usual
    /// path (the client's connection, no headers added by middleware) no array is made for it.
    func reply(_ status: Int, jsonBytes body: UnsafeRawBufferPointer) {
        guard let writer, answerHeaders.isEmpty else {
            return reply(status, body: Array(body), contentType: Self.jsonContentType)
        }
        writer.respond(
            status: status, headers: Self.jsonHeaders, bodyBytes: body, dependingOn: dependsOn,
            refusedUnlessStored: acknowledgesChange(status))
        finished(status)
    }

    /// Whether an answer with `status` acknowledges a change: a success refused (503) should the records it
    /// shows fail to be stored.
    @inline(__always)
    func acknowledgesChange(_ status: Int) -> Bool {
        let verb = request.method
        return status < 300 && verb != .GET && verb != .HEAD && verb != .OPTIONS
    }

    /// The headers of an event stream opened for this exchange: `Cache-Control` and what middleware added.
    var eventStreamHeaders: HTTPHeaders {
        HTTPHeaders(pairs: [("Cache-Control", "no-cache")] + answerHeaders)
    }

    static let jsonContentType = "application/json; charset=utf-8"
    /// The headers of a JSON answer without CORS or extra headers.
    static let jsonHeaders = HTTPHeaders(constant: [("Content-Type", jsonContentType)])

    /// Tells the middleware that observes answers (metrics, access log) how this exchange was answered.
    func finished(_ status: Int) {
        chain?.answered(self, status: status)
    }
}

/// Where an exchange's answer goes: the client's connection (`HTTPResponseWriter`) or, for a request another
/// instance forwarded, back to that instance (`ForwardedReply`). Both hold an answer until the records it shows
/// (`position`) are stored, and refuse one acknowledging a change (503) should they never be.
protocol ExchangeReplyChannel: AnyObject, Sendable {
    func respond(
        status: Int, headers: HTTPHeaders, body: [UInt8], dependingOn position: UInt64?, refusedUnlessStored: Bool)
}

extension HTTPResponseWriter: ExchangeReplyChannel {}
