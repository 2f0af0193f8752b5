import HTTPServer
import JSONCodec

extension ReactorService {
    /// `GET /sessions/{id}/events[?select=/pointer]`: the SSE state stream.
    func subscribe(_ id: String, _ exchange: Exchange) {
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        session.touch(at: context.clock.monotonicNanoseconds())
        var pointer: JSONPointer?
        let selectText = exchange.request.queryValue("select")
        if let selectText {
            do {
                pointer = try JSONPointer(selectText)
            } catch {
                return exchange.fail(APIError(status: 400, code: "invalid_select", message: "select must be a JSON pointer such as /value or /items/0/title (RFC 6901): \(error)"))
            }
        }
        // Browsers resend the last id they saw; anything that is not a version is ignored.
        let lastEventID = exchange.request.headers["Last-Event-ID"].flatMap { UInt64($0.trimmed) }
        // Left memory since the lookup: follow the session loaded back.
        let target = session.isPassivated ? store.session(id) ?? session : session
        target.subscribe(writer: exchange.writer, headers: exchange.eventStreamHeaders, lastEventID: lastEventID, select: pointer, selectText: selectText)
        exchange.finished(200)
    }
}
