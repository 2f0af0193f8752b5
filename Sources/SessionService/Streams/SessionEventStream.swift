import HTTPServer
import JSONCodec
import Synchronization

/// The event stream of one session (`GET /sessions/{id}/events`): the SSE response is the subscriber's
/// sink, and a state goes out as the same bytes to every such stream of the session. It lives as long as
/// its response (whose notices it handles); the credential that opened it may end it (``revoke(_:message:)``).
///
/// ```swift
/// let stream = SessionEventStream.open(
///     session, writer: writer, headers: exchange.eventStreamHeaders, lastEventID: 7, select: nil, selectText: nil)
/// stream?.revoke(nil, message: "the session's token was replaced")   // `event: error` unauthorized, then closed
/// ```
final class SessionEventStream: RevocableStream {
    private weak let session: (any SessionStreamSource)?
    private let subscriber: Subscriber
    /// The response, held weakly: it holds this stream (its notice handler), not the other way round.
    private let response = Mutex(WeakResponse())

    private struct WeakResponse {
        weak var stream: ServerSentEventStream?
    }

    private init(session: any SessionStreamSource, subscriber: Subscriber) {
        self.session = session
        self.subscriber = subscriber
    }

    /// Answers with the event stream and subscribes it to `session`; a session that ended or left memory
    /// meanwhile gets the stream's last event at once (`end`, or `error` `session_passivated`), and nil.
    /// `hold` counts the subscriber against its client address until it has left the session.
    @discardableResult
    static func open(
        _ session: any SessionStreamSource, writer: HTTPResponseWriter, headers: HTTPHeaders, lastEventID: UInt64?,
        select: JSONPointer?, selectText: String?, patches: Bool = false, hold: AddressQuota.Hold? = nil
    ) -> SessionEventStream? {
        let subscriber = Subscriber(
            lastEventID: lastEventID, select: select, selectText: selectText, patches: patches, hold: hold)
        let opened = SessionEventStream(session: session, subscriber: subscriber)
        let stream = writer.startEventStream(headers: headers) { notice in
            opened.session?.handle(SubscriberNotice(notice), for: opened.subscriber)
        }
        opened.response.withLock { $0.stream = stream }
        // The sink is set under the session's lock: the stream's notices (it may already be closing, on
        // its loop's thread) are handled there.
        let end: SubscriptionEnd
        switch session.subscribe(subscriber, sink: stream) {
        case .subscribed: return opened
        case .ended: end = .deleted
        case .passivated:
            end = .unavailable(
                code: ServerSentEventVocabulary.sessionPassivated,
                message: ServerSentEventVocabulary.sessionPassivatedMessage)
        }
        // Never taken in: nothing else gives its place back.
        hold?.release()
        stream.finish(end)
        return nil
    }

    /// Ends the stream with `event: error` `unauthorized` (whatever `id` names: it follows one session)
    /// and takes its subscriber out of the session.
    func revoke(_ id: String?, message: String) {
        guard let stream = response.withLock({ $0.stream }) else { return }
        let code = ServerSentEventVocabulary.unauthorized
        stream.close(with: ServerSentEventVocabulary.error(session: nil, code: code, message: message, cursor: nil))
        // A response its producer closes sends no `.closed` notice: the session is told here.
        session?.handle(.closed, for: subscriber)
    }
}

extension ServerSentEventStream: SubscriberSink {
    /// Queues a session's state or pulse in API.md's one-session words, encoded once for every stream.
    public func send(_ event: SessionEvent, in batch: inout DeliveryBatch) -> DeliveryResult {
        batch.withFlush(EventStreamFlush.self) { flush in
            let wire = event.wire(for: ObjectIdentifier(ServerSentEventStream.self), make: Self.wire)
            return DeliveryResult(send(EncodedServerSentEvent(bytes: wire, position: event.position), in: &flush.batch))
        }
    }

    /// An event in API.md's one-session words.
    static func wire(_ event: SessionEvent) -> [UInt8] {
        switch event.kind {
        case .state(let version): ServerSentEventVocabulary.state(version: version, json: event.json)
        case .patch(let version): ServerSentEventVocabulary.patch(version: version, json: event.json)
        case .pulse(let name, let count): ServerSentEventVocabulary.pulse(name: name, count: count, value: event.json)
        }
    }

    /// Closes the stream after its last event: `end`, or `error` with the code. An error shows nothing
    /// stored, so it does not wait for storage (which may be failing); `end` shows the deletion's record.
    public func finish(_ end: SubscriptionEnd) {
        close(with: ServerSentEventVocabulary.ending(end), dependingOn: end == .deleted ? nil : 0)
    }
}

/// The SSE streams one fan-out queued events on: their loops are woken once each when it ends.
final class EventStreamFlush: DeliveryFlush {
    @exclusivity(unchecked) var batch = ServerSentEventStream.Batch()

    init() {}

    func flush() { batch.schedule() }
}

extension DeliveryResult {
    init(_ result: ServerSentEventStream.SendResult) {
        switch result {
        case .queued: self = .queued
        case .overflow: self = .overflow
        case .closed: self = .closed
        }
    }
}

extension SubscriberNotice {
    init(_ notice: EventStreamNotice) {
        switch notice {
        case .drained: self = .drained
        case .closed: self = .closed
        }
    }
}
