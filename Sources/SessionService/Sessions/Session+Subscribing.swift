import JSONCodec
import Logs
import Reactors
import Synchronization

// Subscribing: subscribers join and leave a session, whatever transport carries their events.
extension Session {
    @usableFromInline
    func subscribe(_ subscriber: Subscriber, sink: any SubscriberSink) -> SubscribeOutcome {
        var startObserving = false
        let outcome = shared.withLock { shared -> SubscribeOutcome in
            // Passivation checks for subscribers under this lock: it either saw this one or set the flag first.
            // Checked first: a session that moved to another instance has ended here too, and a subscriber
            // told it ended would take it for deleted instead of looking for it again.
            guard !passivated.load(ordering: .relaxed) else { return .passivated }
            guard !shared.ended else { return .ended }
            // Before the observer starts, its first event delivers the latest state.
            shared.subscribers.add(
                subscriber, sink: sink, latest: shared.observing ? latest(shared) : nil, reporting: reporting)
            if !shared.observing {
                shared.observing = true
                startObserving = true
            }
            return .subscribed
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
        return outcome
    }

    @usableFromInline
    var isPassivated: Bool { passivated.load(ordering: .acquiring) }

    @usableFromInline
    func handle(_ notice: SubscriberNotice, for subscriber: Subscriber) {
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
                SubscriberInfo(
                    queuedBytes: $0.sink?.queuedByteCount ?? 0, lastEventID: $0.lastSentVersion, drops: $0.drops,
                    select: $0.selectText)
            }
        }
    }
}
