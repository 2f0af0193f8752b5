import Dispatch
import Synchronization

/// A subscriber on the instance that runs a session, standing for another instance that streams the
/// session to its own clients (``RelayedSession`` there): every event goes to that instance's inbox
/// over the cluster, in the order the session delivers them, once the records it shows are durable
/// here (the other instance shows it at once). An event whose records can never be stored (the session
/// was taken over meanwhile) is never sent; the session's `session_moved` follows it. It never refuses
/// events: the cluster connection buffers them, and a relay that cannot be reached is dropped by the
/// sweep.
final class RelaySink: SubscriberSink {
    let peers: any ClusterPeers
    let storage: any StorageBackend
    /// The other instance's inbox, and its name.
    let subject: String
    let instance: String
    private let outbox = Mutex(Outbox())

    /// Events not sent yet, each with the position of the records it shows (0: none).
    private struct Outbox {
        var events: [(event: RelayedEvent, position: UInt64)] = []
        var next = 0
        var bytes = 0
        /// The position a wake-up is asked for, so one is asked at a time.
        var awaited: UInt64?
        /// Sending failed: the relay is over.
        var closed = false
    }

    init(peers: any ClusterPeers, storage: any StorageBackend, subject: String, instance: String) {
        self.peers = peers
        self.storage = storage
        self.subject = subject
        self.instance = instance
    }

    func send(_ event: SessionEvent, in batch: inout DeliveryBatch) -> DeliveryResult {
        let kind: RelayedEvent.Kind
        switch event.kind {
        case .state(let version): kind = .state(version: version)
        case .pulse(let name, let count): kind = .pulse(name: name, count: count)
        case .patch:
            // A relay subscribes without `delta` (the other instance makes its own patches from whole states),
            // so none comes here; one that did could not be relayed as a state: the relay ends and reconnects.
            return .closed
        }
        return enqueue(RelayedEvent(kind: kind, json: event.json), position: event.position) ? .queued : .closed
    }

    func finish(_ end: SubscriptionEnd) {
        let kind: RelayedEvent.Kind
        switch end {
        case .deleted: kind = .end
        case .unavailable(let code, let message): kind = .error(code: code, message: message)
        case .tooSlow(let message): kind = .error(code: ServerSentEventVocabulary.subscriberTooSlow, message: message)
        }
        _ = enqueue(RelayedEvent(kind: kind, json: []), position: 0)
    }

    var queuedByteCount: Int { outbox.withLock { $0.bytes } }

    /// Queues an event and sends what may go; false once the relay is over.
    private func enqueue(_ event: RelayedEvent, position: UInt64) -> Bool {
        outbox.withLock { outbox in
            guard !outbox.closed else { return false }
            outbox.events.append((event, position))
            outbox.bytes += event.json.count
            send(&outbox)
            return !outbox.closed
        }
    }

    /// Sends the events whose records are durable, in order; asks to be woken for the first that is
    /// not yet. Runs under the outbox's lock, so sends never overtake each other.
    private func send(_ outbox: inout Outbox) {
        while outbox.next < outbox.events.count, !outbox.closed {
            let (event, position) = outbox.events[outbox.next]
            if position > 0 && !storage.isDurable(position) {
                guard outbox.awaited != position else { return }
                outbox.awaited = position
                // Woken on the storage's thread, possibly at once: sent from another, never inline. Held
                // strongly: a finished subscription lets go of its sink, whose last events still go.
                storage.whenDurable(position) {
                    DispatchQueue.global().async { self.resume() }
                }
                return
            }
            outbox.next += 1
            outbox.bytes -= event.json.count
            // Never stored, so never shown: the session that made it has moved away.
            if position > 0 && storage.lossReason(position) != nil { continue }
            if !peers.sendRelayed(event, to: subject) { outbox.closed = true }
        }
        if outbox.closed || outbox.next == outbox.events.count {
            outbox.events.removeAll(keepingCapacity: outbox.events.count <= 64)
            outbox.next = 0
            outbox.bytes = 0
        }
    }

    /// The awaited position was resolved: send on.
    private func resume() {
        outbox.withLock { outbox in
            outbox.awaited = nil
            send(&outbox)
        }
    }
}
