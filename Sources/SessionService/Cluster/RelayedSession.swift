import JSONCodec
import Synchronization

/// A session another instance runs, as seen by this instance's event streams: one subscription on
/// the owner (its events come over the cluster, in order) shared by every local subscriber, with the
/// same delivery rules as a resident session's (versions in order and never twice, the latest state
/// on joining, `select`, slow subscribers skipping states). It takes no actions: only streams use it.
/// When its owner ends the subscription (the session was deleted, moved, or left memory), every local
/// subscriber gets the same end and reconnects (EventSource does so by itself) to wherever it runs.
final class RelayedSession: SessionStreamSource {
    let id: String
    let reactorName: String
    let owner: String
    let context: SessionContext
    private let shared = Mutex(Shared())
    /// Called once it has ended, so its registry forgets it.
    private let onEnd: @Sendable (RelayedSession) -> Void

    private struct Shared {
        var subscribers = SubscriberList(restartsFutureResumes: false)
        var latest: (version: UInt64, json: [UInt8])?
        var ended = false
        var inbox: RelayInbox?
        /// When the owner confirmed the subscription (monotonic nanoseconds); nil until it has.
        var establishedAt: UInt64?
    }

    init(
        id: String, reactor: String, owner: String, context: SessionContext,
        onEnd: @escaping @Sendable (RelayedSession) -> Void
    ) {
        self.id = id
        reactorName = reactor
        self.owner = owner
        self.context = context
        self.onEnd = onEnd
    }

    var reporting: SubscriberList.Reporting { SubscriberList.Reporting(context: context, sessionID: id) }

    /// Listens on a fresh inbox and subscribes there on the owner; false (ended) when either fails.
    func start(_ peers: any ClusterPeers) -> Bool {
        guard let inbox = peers.openRelayInbox({ [weak self] event in self?.receive(event) }) else { return false }
        shared.withLock { $0.inbox = inbox }
        let request = ForwardedRequest(
            method: Self.subscribeMethod, target: "/sessions/\(id)/events", contentType: nil, body: [],
            relay: (inbox.subject, peers.instanceName))
        peers.forward(request, to: owner) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let answer) where answer.status == 200:
                let now = context.clock.monotonicNanoseconds()
                shared.withLock { $0.establishedAt = now }
            case .success(let answer):
                end(.moved("instance \(owner) no longer runs the session (\(answer.status)); reconnect to follow it"))
            case .failure(let error):
                end(
                    .moved(
                        "instance \(owner), which runs the session, did not answer (\(error)); reconnect to follow it"))
            }
        }
        return true
    }

    /// The method of a forwarded request that subscribes a relay, the one that ends it, and the one that asks
    /// which of a list of relays (their inbox subjects, one per line) the owner no longer feeds.
    static let subscribeMethod = "SUBSCRIBE"
    static let unsubscribeMethod = "UNSUBSCRIBE"
    static let checkMethod = "CHECKRELAYS"

    /// When the owner confirmed the subscription, if it has.
    var establishedAt: UInt64? { shared.withLock { $0.establishedAt } }

    /// One event from the owner, in the order it sent them.
    func receive(_ event: RelayedEvent) {
        switch event.kind {
        case .state(let version):
            shared.withLock { shared in
                guard !shared.ended, version > shared.latest?.version ?? 0 || shared.latest == nil else { return }
                shared.latest = (version, event.json)
                shared.subscribers.publish(Self.latest(version, event.json), pulses: [], reporting: reporting)
            }
        case .pulse(let name, let count):
            shared.withLock { shared in
                guard !shared.ended, let latest = shared.latest else { return }
                let pulse = SessionEvent(.pulse(name: name, count: count), json: event.json, position: 0)
                shared.subscribers.publish(
                    Self.latest(latest.version, latest.json), pulses: [pulse], reporting: reporting)
            }
        case .end:
            end(.deleted)
        case .error(let code, let message):
            end(.unavailable(code: code, message: message))
        }
    }

    static func latest(_ version: UInt64, _ json: [UInt8]) -> SubscriberList.Latest {
        // Relayed once durable where the session runs: nothing here to wait for.
        SubscriberList.Latest(
            version: version, position: 0, json: { json },
            value: { try? JSONParser(maxDepth: 512, maxBytes: .max).parse(json) })
    }

    /// Ends every local subscription with `end` and stops listening.
    func end(_ end: SubscriptionEnd) {
        let (subscribers, inbox) = shared.withLock { shared -> ([Subscriber], RelayInbox?) in
            guard !shared.ended else { return ([], nil) }
            shared.ended = true
            defer { shared.inbox = nil }
            return (shared.subscribers.removeAll(reporting), shared.inbox)
        }
        guard let inbox else { return }
        inbox.close()
        SubscriberList.finish(subscribers, end)
        onEnd(self)
    }

    /// Whether its last local subscriber left (then the registry ends it and unsubscribes on the owner).
    var isUnwatched: Bool { shared.withLock { !$0.ended && $0.subscribers.isEmpty } }

    /// The subject its events come to, while it listens.
    var inboxSubject: String? { shared.withLock { $0.inbox?.subject } }

    // MARK: SessionStreamSource

    func subscribe(_ subscriber: Subscriber, sink: any SubscriberSink) -> SubscribeOutcome {
        shared.withLock { shared in
            // Ended as this subscriber came (its owner let it go, or nobody watched): look it up again.
            guard !shared.ended else { return .passivated }
            shared.subscribers.add(
                subscriber, sink: sink, latest: shared.latest.map { Self.latest($0.version, $0.json) },
                reporting: reporting)
            return .subscribed
        }
    }

    func handle(_ notice: SubscriberNotice, for subscriber: Subscriber) {
        shared.withLock { shared in
            shared.subscribers.handle(
                notice, for: subscriber, latest: shared.latest.map { Self.latest($0.version, $0.json) },
                reporting: reporting)
        }
    }

    var subscriberCount: Int { shared.withLock { $0.subscribers.count } }

    func subscriberInfo() -> [SubscriberInfo] { [] }

    func snapshot() -> EncodedSnapshot {
        shared.withLock { shared in
            shared.latest.map { EncodedSnapshot(version: $0.version, state: $0.json) }
                ?? EncodedSnapshot(version: 0, state: Array("null".utf8))
        }
    }

    var lastActive: UInt64 { 0 }
    func touch(at nanoseconds: UInt64) {}
    func end() { end(.deleted) }
    /// Never passivated: it ends when its owner lets the session go, and a request looks the session up again.
    var isPassivated: Bool { false }
    /// Its states are stored by the instance that runs the session.
    var storedPosition: UInt64 { 0 }
}
