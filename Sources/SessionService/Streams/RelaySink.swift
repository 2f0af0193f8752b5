/// A subscriber on the instance that runs a session, standing for another instance that streams the
/// session to its own clients (``RelayedSession`` there): every event goes to that instance's inbox
/// over the cluster, in the order the session delivers them. It never holds events back: the
/// cluster connection buffers them, and a relay that cannot be reached is dropped by the sweep.
final class RelaySink: SubscriberSink {
    let peers: any ClusterPeers
    /// The other instance's inbox, and its name.
    let subject: String
    let instance: String

    init(peers: any ClusterPeers, subject: String, instance: String) {
        self.peers = peers
        self.subject = subject
        self.instance = instance
    }

    func send(_ event: SessionEvent, in batch: inout DeliveryBatch) -> DeliveryResult {
        let kind: RelayedEvent.Kind
        switch event.kind {
        case .state(let version): kind = .state(version: version)
        case .pulse(let name, let count): kind = .pulse(name: name, count: count)
        }
        return peers.sendRelayed(RelayedEvent(kind: kind, json: event.json), to: subject) ? .queued : .closed
    }

    func finish(_ end: SubscriptionEnd) {
        let kind: RelayedEvent.Kind
        switch end {
        case .deleted: kind = .end
        case .unavailable(let code, let message): kind = .error(code: code, message: message)
        case .tooSlow(let message): kind = .error(code: ServerSentEventVocabulary.subscriberTooSlow, message: message)
        }
        _ = peers.sendRelayed(RelayedEvent(kind: kind, json: []), to: subject)
    }

    var queuedByteCount: Int { 0 }
}
