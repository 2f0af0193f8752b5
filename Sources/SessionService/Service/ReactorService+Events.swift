import HTTPServer
import JSONCodec

extension ReactorService {
    /// `GET /sessions/{id}/events[?select=/pointer]`: the SSE state stream (`HEAD`: its head alone).
    func subscribe(_ id: String, _ exchange: Exchange) {
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        session.touch(at: context.clock.monotonicNanoseconds())
        // Counted without a lock, so a burst of subscribers racing the limit may pass it by a few.
        let limits = configuration.sse
        if session.subscriberCount >= limits.maxSubscribersPerSession {
            return exchange.fail(.tooManySubscribers("session \(JSONWriter.quoted(id)) has its limit of \(limits.maxSubscribersPerSession) subscribers (sse.maxSubscribersPerSession)"))
        }
        if metrics.subscribers.value >= limits.maxSubscribers {
            return exchange.fail(.tooManySubscribers("the server has its limit of \(limits.maxSubscribers) subscribers (sse.maxSubscribers)"))
        }
        var pointer: JSONPointer?
        let selectText = exchange.request.queryValue("select")
        if let selectText {
            do {
                pointer = try JSONPointer(selectText)
            } catch {
                return exchange.fail(APIError(status: 400, code: "invalid_select", message: "select must be a JSON pointer such as /value or /items/0/title (RFC 6901): \(error)"))
            }
        }
        if exchange.request.method == .HEAD {
            // The head GET would get, and no subscription: the server sends no events for HEAD.
            _ = exchange.writer.startEventStream(headers: exchange.eventStreamHeaders) { _ in }
            return exchange.finished(200)
        }
        // Browsers resend the last id they saw; anything that is not a version is ignored.
        let lastEventID = exchange.request.headers["Last-Event-ID"].flatMap { UInt64($0.trimmed) }
        // Left memory since the lookup: follow the session loaded back.
        let target = session.isPassivated ? store.session(id) ?? session : session
        target.subscribe(writer: exchange.writer, headers: exchange.eventStreamHeaders, lastEventID: lastEventID, select: pointer, selectText: selectText)
        exchange.finished(200)
    }
}
