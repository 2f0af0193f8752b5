import HTTPServer
import JSONCodec

extension ReactorService {
    /// `GET /sessions/{id}/events[?select=/pointer][&delta=json-patch]`: the SSE state stream of one session
    /// (`HEAD`: its head alone).
    func subscribe(_ exchange: Exchange) {
        let id = exchange.id
        guard let session = streamedSession(id) else { return exchange.fail(store.absence(id)) }
        session.touch(at: context.clock.monotonicNanoseconds())
        // Counted without a lock, so a burst of subscribers racing the limit may pass it by a few.
        let limits = configuration.sse
        if session.subscriberCount >= limits.maxSubscribersPerSession {
            return exchange.fail(
                .tooManySubscribers(
                    "session \(JSONWriter.quoted(id)) has its limit of \(limits.maxSubscribersPerSession) subscribers "
                        + "(sse.maxSubscribersPerSession)"
                ))
        }
        if metrics.subscribers.value >= limits.maxSubscribers {
            return exchange.fail(
                .tooManySubscribers(
                    "the server has its limit of \(limits.maxSubscribers) subscribers (sse.maxSubscribers)"))
        }
        let select: (pointer: JSONPointer, text: String)?
        let patches: Bool
        // Given back by the subscriber once it leaves the session, or when dropped unused (HEAD, a refusal).
        let holds: [AddressQuota.Hold]
        do {
            select = try Self.select(exchange)
            patches = try Self.patches(exchange)
            holds = try holdSubscribers(1, for: exchange)
        } catch {
            return exchange.fail(error)
        }
        // Its first event would wait for records that may never be written.
        if refusedAsUnstored(id, at: session.storedPosition, exchange) { return }
        if exchange.request.method == .HEAD { return Self.answerHead(exchange) }
        // Browsers resend the last id they saw; anything that is not a version is ignored.
        let lastEventID = exchange.request.headers["Last-Event-ID"].flatMap { UInt64($0.trimmed) }
        // Left memory since the lookup: follow the session loaded back.
        let target = session.isPassivated ? store.session(id) ?? session : session
        guard let writer = exchange.writer else { return exchange.fail(.notFound(exchange.request.path)) }
        let stream = SessionEventStream.open(
            target, writer: writer, headers: exchange.eventStreamHeaders, lastEventID: lastEventID,
            select: select?.pointer, selectText: select?.text, patches: patches, hold: holds.first)
        if let stream {
            endWhenCredentialLapses(stream, tokens: exchange.matchedTokenHash.map { [(id, $0)] } ?? [], exchange)
        }
        exchange.finished(200)
    }

    /// The `?select=` pointer of a stream request, if any (400 `invalid_select` when it is not one).
    static func select(_ exchange: Exchange) throws(APIError) -> (pointer: JSONPointer, text: String)? {
        let texts = exchange.request.queryValues("select")
        guard let text = texts.first else { return nil }
        guard texts.allSatisfy({ $0 == text }) else {
            throw APIError(.invalidSelect, "select is given \(texts.count) times with different pointers: give one")
        }
        do {
            return (try JSONPointer(text), text)
        } catch {
            throw APIError(
                .invalidSelect, "select must be a JSON pointer such as /value or /items/0/title (RFC 6901): \(error)")
        }
    }

    /// Whether a stream request asks for patches after its first state (`?delta=json-patch`, API.md "Patches
    /// instead of whole states"); 400 `invalid_delta` for any other value, also one given beside it.
    static func patches(_ exchange: Exchange) throws(APIError) -> Bool {
        let deltas = exchange.request.queryValues("delta")
        guard !deltas.isEmpty else { return false }
        if let delta = deltas.first(where: { $0 != "json-patch" }) {
            let message =
                "delta=\(JSONWriter.quoted(String(delta.prefix(80)))) is not a delta this server makes: "
                + "ask for json-patch (RFC 6902 patches after the first state), or leave delta out for whole states"
            throw APIError(.invalidDelta, message)
        }
        return true
    }

    /// `HEAD` on a stream: the head a `GET` would get, and no subscription (the server writes no events
    /// for `HEAD` and closes).
    static func answerHead(_ exchange: Exchange) {
        guard let writer = exchange.writer else { return exchange.fail(.notFound(exchange.request.path)) }
        _ = writer.startEventStream(headers: exchange.eventStreamHeaders) { _ in }
        exchange.finished(200)
    }
}
