import HTTPServer
import JSONCodec

/// The event stream of one session (`GET /sessions/{id}/events`): the SSE response is the subscriber's
/// sink, and a state goes out as the same bytes to every such stream of the session.
///
/// ```swift
/// SessionEventStream.open(session, writer: exchange.writer, headers: exchange.eventStreamHeaders, lastEventID: 7, select: nil, selectText: nil)
/// ```
enum SessionEventStream {
    /// Answers with the event stream and subscribes it to `session`; a session that ended or left memory
    /// meanwhile gets the stream's last event at once (`end`, or `error` `session_passivated`).
    static func open(_ session: any HostedSession, writer: HTTPResponseWriter, headers: HTTPHeaders, lastEventID: UInt64?, select: JSONPointer?, selectText: String?) {
        let subscriber = Subscriber(lastEventID: lastEventID, select: select, selectText: selectText)
        let stream = writer.startEventStream(headers: headers) { [weak session, subscriber] notice in
            session?.handle(SubscriberNotice(notice), for: subscriber)
        }
        // The sink is set under the session's lock: the stream's notices (it may already be closing, on
        // its loop's thread) are handled there.
        let end: SubscriptionEnd
        switch session.subscribe(subscriber, sink: stream) {
        case .subscribed: return
        case .ended: end = .deleted
        case .passivated: end = .unavailable(code: ServerSentEventVocabulary.sessionPassivated, message: ServerSentEventVocabulary.sessionPassivatedMessage)
        }
        stream.finish(end)
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
