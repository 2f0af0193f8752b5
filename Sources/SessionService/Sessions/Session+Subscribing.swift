import HTTPServer
import JSONCodec
import Logs
import Reactors
import Synchronization

// Subscribing: SSE streams join and leave a session.
extension Session {
    @usableFromInline
    func subscribe(writer: HTTPResponseWriter, headers: HTTPHeaders, lastEventID: UInt64?, select: JSONPointer?, selectText: String?) {
        let subscriber = Subscriber(select: select, selectText: selectText)
        var passivatedMeanwhile = false
        // Weak: the subscriber holds the stream, so a strong capture would keep both (and the stream's
        // connection) alive after the subscriber leaves; the list holds it for as long as it is subscribed.
        let stream = writer.startEventStream(headers: headers) { [weak self, weak subscriber] notice in
            guard let subscriber else { return }
            self?.handle(notice, for: subscriber)
        }
        var startObserving = false
        let accepted = shared.withLock { shared -> Bool in
            guard !shared.ended else { return false }
            // Passivation checks for subscribers under this lock: it either saw this one or set the flag first.
            guard !passivated.load(ordering: .relaxed) else {
                passivatedMeanwhile = true
                return false
            }
            subscriber.stream = stream
            subscriber.lastSentVersion = lastEventID
            // Before the observer starts, its first event delivers the latest state.
            shared.subscribers.add(subscriber, latest: shared.observing ? latest(shared) : nil, reporting: reporting)
            if !shared.observing {
                shared.observing = true
                startObserving = true
            }
            return true
        }
        guard accepted else {
            return stream.close(with: passivatedMeanwhile ? Self.reconnectEvent : Self.endEvent)
        }
        if startObserving {
            // Outside the lock: the runtime may call the handler right here, with the latest state,
            // which then goes to every subscriber registered so far.
            let token = runtime.observe { [weak self, publisher] event in
                guard let self else { return }
                publisher(self, event)
            }
            let ended = shared.withLock { shared -> Bool in
                shared.observation = token
                return shared.ended
            }
            if ended { token.cancel() }
        }
    }

    /// Closes a stream opened in the instant its session left memory: the client reconnects (as
    /// EventSource does by itself) and gets the session loaded back.
    static var reconnectEvent: ServerSentEvent {
        ServerSentEvent(event: "error", data: #"{"code":"session_passivated","message":"the session left memory as this stream opened; reconnect to follow it"}"#)
    }

    @usableFromInline
    var isPassivated: Bool { passivated.load(ordering: .acquiring) }

    func handle(_ notice: EventStreamNotice, for subscriber: Subscriber) {
        shared.withLock { shared in
            shared.subscribers.handle(notice, for: subscriber, latest: latest(shared), reporting: reporting)
        }
        // A subscriber leaving is the session's last activity: idle expiry and passivation count from
        // here, not from the request before it (else a session watched for hours expires at once).
        if case .closed = notice { touch(at: context.clock.monotonicNanoseconds()) }
    }

    @usableFromInline
    var subscriberCount: Int { shared.withLock { $0.subscribers.count } }

    @usableFromInline
    func subscriberInfo() -> [SubscriberInfo] {
        shared.withLock { shared in
            shared.subscribers.all.map {
                SubscriberInfo(queuedBytes: $0.stream?.queuedByteCount ?? 0, lastEventID: $0.lastSentVersion, drops: $0.drops, select: $0.selectText)
            }
        }
    }
}
