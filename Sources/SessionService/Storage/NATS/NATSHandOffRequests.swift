import JSONCodec
import NATS
import Synchronization

/// The asking side of a hand-off (request/reply on `<prefix>.handoff.<instance>`, answered by
/// ``NATSStorage/serveHandOff(_:)`` on the owner): asking the owner of a session to let it go, remembering the
/// owners that did not answer, and the sessions this instance just handed off, which it refuses to load back.
///
/// ```swift
/// if handOffs.request("s1", from: "web-2") == .released { /* claim it again */ }
/// ```
final class NATSHandOffRequests: Sendable {
    /// How long an owner that did not answer a hand-off request is not asked again: requests for its
    /// sessions are refused at once (503) meanwhile, instead of each waiting out the budget while
    /// its claim expires.
    static let silenceMemory: Duration = .seconds(1)

    private let connection: NATSConnection
    private let names: NATSStorageNames
    private let options: NATSStorage.Options
    private let metrics: NATSStorageMetrics
    /// Owners that did not answer a hand-off request, and when (monotonic nanoseconds).
    private let silentOwners = Mutex<[String: Int64]>([:])
    /// Sessions this instance just handed off, to whom, and until when it refuses to load them back.
    private let handedOff = Mutex<[String: (to: String, until: Int64)]>([:])

    init(
        connection: NATSConnection, names: NATSStorageNames, options: NATSStorage.Options, metrics: NATSStorageMetrics
    ) {
        self.connection = connection
        self.names = names
        self.options = options
        self.metrics = metrics
    }

    /// Asks `owner` to let session `id` go, and waits for its answer (its own budget, and a margin).
    func request(_ id: String, from owner: String) -> HandOffReply {
        let started = OwnershipLease.now()
        if let since = silentOwners.withLock({ $0[owner] }), started - since < Self.silenceMemory.nanoseconds {
            return .silent(
                "it did not answer a hand-off request just now; "
                    + "its claim expires \(options.claimTTL) after its last heartbeat"
            )
        }
        let request = JSONValue.object(JSONObject([("session", .string(id)), ("from", .string(options.instance))]))
            .serialized()
        let subject = names.handOff(owner)
        let timeout = options.handOffBudget + .milliseconds(250)
        let connection = self.connection
        let result = Blocking.call("the hand-off request to \(subject)", timeout: timeout) {
            (completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void) throws(NATSError) in
            try connection.request(subject, payload: request, timeout: timeout, completion: completion)
        }
        switch result {
        case .failure(.noResponders):
            return .ownerGone
        case .failure(let error):
            silentOwners.withLock { $0[owner] = OwnershipLease.now() }
            return .silent("it did not answer the hand-off request: \(error)")
        case .success(let message):
            guard let reply = try? JSONParser(maxDepth: 4, maxBytes: 64 << 10).parse(message.payload),
                let outcome = reply["outcome"]?.stringValue
            else {
                return .refused("its answer to the hand-off request is not JSON: \(message.text.prefix(200))")
            }
            silentOwners.withLock { _ = $0.removeValue(forKey: owner) }
            guard outcome == "released" else { return .refused(reply["reason"]?.stringValue ?? outcome) }
            metrics.handOffLatency.observe(nanoseconds: UInt64(max(0, OwnershipLease.now() - started)))
            return .released
        }
    }

    /// Session `id` was just handed off to `instance`: loads of it here are refused for a moment
    /// (``NATSStorage/Options/handOffQuarantine``), so requests on their way here follow it instead of pulling it
    /// back.
    func noteHandedOff(_ id: String, to instance: String) {
        handedOff.withLock { $0[id] = (instance, OwnershipLease.now() + options.handOffQuarantine.nanoseconds) }
    }

    /// The instance this one handed session `id` to moments ago, while it refuses to load it back.
    func recentlyHandedOff(_ id: String) -> String? {
        handedOff.withLock { handedOff in
            let now = OwnershipLease.now()
            if handedOff.count > 1024 { handedOff = handedOff.filter { $0.value.until > now } }
            guard let entry = handedOff[id] else { return nil }
            guard entry.until > now else {
                handedOff.removeValue(forKey: id)
                return nil
            }
            return entry.to
        }
    }
}
