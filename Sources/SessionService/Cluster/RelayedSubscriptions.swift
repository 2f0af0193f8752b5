import Synchronization

/// Streams of sessions that run on another instance (the NATS backend's cluster). On the instance
/// that streams: one ``RelayedSession`` per such session, shared by its local subscribers. On the
/// instance that runs it: the subscriptions other instances hold, each a ``RelaySink``.
final class RelayedSubscriptions: Sendable {
    private let relayed = Mutex<[String: RelayedSession]>([:])
    private let held = Mutex<[String: Held]>([:])

    /// A subscription another instance holds here, by the subject its events go to.
    struct Held: @unchecked Sendable {
        let session: any SessionStreamSource
        let subscriber: Subscriber
        let instance: String

        /// Whether the session still sends it events: not once it ended the subscription (its sink is gone), nor
        /// once a send to the relay failed (the subscriber is closed, and no notice from the relay will say so).
        var isFeeding: Bool { subscriber.sink != nil && !subscriber.closed }
    }

    // MARK: Streaming a session another instance runs

    /// The relay of session `id` from `owner`: the one already running, or a new one subscribed there.
    func session(_ id: String, owner: String, reactor: String, context: SessionContext, peers: any ClusterPeers)
        -> RelayedSession?
    {
        relayed.withLock { relayed -> RelayedSession? in
            if let running = relayed[id], running.owner == owner { return running }
            let session = RelayedSession(id: id, reactor: reactor, owner: owner, context: context) {
                [weak self] ended in self?.forget(ended)
            }
            guard session.start(peers) else { return nil }
            relayed[id] = session
            return session
        }
    }

    private func forget(_ session: RelayedSession) {
        relayed.withLock { relayed in
            if relayed[session.id] === session { relayed.removeValue(forKey: session.id) }
        }
    }

    // MARK: Serving another instance's stream

    /// Subscribes `instance`'s relay (its inbox `subject`) to `session` here; false when the session
    /// cannot take subscribers now (it ended or left memory).
    func hold(
        _ session: any SessionStreamSource, for subject: String, instance: String, peers: any ClusterPeers,
        storage: any StorageBackend
    ) -> Bool {
        let subscriber = Subscriber(lastEventID: nil, select: nil, selectText: nil)
        let sink = RelaySink(peers: peers, storage: storage, subject: subject, instance: instance)
        guard session.subscribe(subscriber, sink: sink) == .subscribed else { return false }
        let replaced = held.withLock {
            $0.updateValue(Held(session: session, subscriber: subscriber, instance: instance), forKey: subject)
        }
        if let replaced { replaced.session.handle(.closed, for: replaced.subscriber) }
        return true
    }

    /// The subjects of the subscriptions other instances hold here.
    var heldSubjects: [String] { held.withLock { Array($0.keys) } }

    /// Ends the subscription whose events go to `subject` (its relay has no subscribers left).
    func release(_ subject: String) {
        guard let gone = held.withLock({ $0.removeValue(forKey: subject) }) else { return }
        gone.session.handle(.closed, for: gone.subscriber)
    }

    // MARK: Upkeep

    /// Ends relays here without local subscribers (telling their owners) and relays whose owner no
    /// longer runs the session as far as this instance can tell (it runs here now, `isResident`, or
    /// its owner's heartbeat is gone), and forgets subscriptions held for instances that are gone or
    /// whose session ended them.
    func sweep(_ peers: any ClusterPeers, isResident: (String) -> Bool) {
        // An owner whose records were fenced off may never say that it lost the session (it may be
        // cut off from the cluster for good): the instance that took the session over, or any that
        // sees the owner gone, sends the relay's subscribers to where the session runs now.
        let all = relayed.withLock { Array($0.values) }
        let goneOwners = Set(Set(all.map(\.owner)).filter { !peers.isAlive($0) })
        for session in all where isResident(session.id) || goneOwners.contains(session.owner) {
            let inbox = session.inboxSubject
            session.end(.moved("instance \(session.owner) no longer runs the session; reconnect to follow it"))
            if let inbox, !goneOwners.contains(session.owner) { unsubscribe(session, inbox, peers) }
        }
        let unwatched = relayed.withLock { relayed in relayed.values.filter(\.isUnwatched) }
        for session in unwatched {
            let inbox = session.inboxSubject
            // Nobody watches it; one who joined in the instant since is sent to reconnect, not told it ended.
            session.end(
                .moved("this instance stopped relaying the session as this stream joined; reconnect to follow it"))
            unsubscribe(session, inbox ?? "", peers)
        }
        let holders = held.withLock { held in Set(held.values.map(\.instance)) }
        let goneHolders = Set(holders.filter { !peers.isAlive($0) })
        let dropped = held.withLock { held -> [Held] in
            let dropped = held.filter { goneHolders.contains($0.value.instance) || !$0.value.isFeeding }
            for subject in dropped.keys { held.removeValue(forKey: subject) }
            return Array(dropped.values)
        }
        for entry in dropped { entry.session.handle(.closed, for: entry.subscriber) }
    }

    /// Asks each owner which of the relays here it no longer feeds, and ends those (`session_moved`, so their
    /// subscribers reconnect to where the session runs): a relay's end travels as one message over the cluster,
    /// and one that never arrives (or a subscription the owner dropped as its session moved away and back)
    /// would leave its streams silent for good. Only relays confirmed before `confirmedBefore` are asked about,
    /// so one still being set up is not taken for lost. One request per owner per call.
    func verify(_ peers: any ClusterPeers, confirmedBefore: UInt64) {
        let all = relayed.withLock { Array($0.values) }
        let byOwner = Dictionary(grouping: all.filter { ($0.establishedAt ?? .max) < confirmedBefore }, by: \.owner)
        for (owner, sessions) in byOwner {
            let subjects = sessions.compactMap(\.inboxSubject)
            guard !subjects.isEmpty else { continue }
            let request = ForwardedRequest(
                method: RelayedSession.checkMethod, target: "/events", contentType: nil,
                body: Array(subjects.joined(separator: "\n").utf8))
            peers.forward(request, to: owner) { result in
                // No answer: the owner's liveness is the sweep's to judge.
                guard case .success(let answer) = result, answer.status == 200 else { return }
                let lost = Set(
                    answer.body.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) })
                for session in sessions where lost.contains(session.inboxSubject ?? "") {
                    session.end(
                        .moved("instance \(owner) no longer sends this session's events; reconnect to follow it"))
                }
            }
        }
    }

    /// Of the relay subjects in `body` (one per line), those this instance does not feed (any more): the answer
    /// to ``verify(_:confirmedBefore:)``.
    func unfed(_ body: [UInt8]) -> [UInt8] {
        let subjects = body.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        let lost = held.withLock { held in subjects.filter { held[$0]?.isFeeding != true } }
        return Array(lost.joined(separator: "\n").utf8)
    }

    /// Tells the owner of `session` to end the subscription whose events go to `inbox`.
    private func unsubscribe(_ session: RelayedSession, _ inbox: String, _ peers: any ClusterPeers) {
        let request = ForwardedRequest(
            method: RelayedSession.unsubscribeMethod, target: "/sessions/\(session.id)/events", contentType: nil,
            body: [], relay: (inbox, peers.instanceName))
        peers.forward(request, to: session.owner) { _ in }
    }
}
