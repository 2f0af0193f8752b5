/// The other instances sharing a storage backend (the NATS backend's cluster, ``NATSCluster``): who runs a session,
/// and requests sent to the instance that does, so admin routes served anywhere act on the session
/// where it runs instead of moving it. A backend on one machine (the file journal) has none.
///
/// ```swift
/// if let peers = service.peers, let owner = peers.owner(of: "demo") {
///     let request = ForwardedRequest(
///         method: "GET", target: "/admin/sessions/demo/actions", contentType: nil, body: [])
///     peers.forward(request, to: owner) { print($0) }
/// }
/// ```
protocol ClusterPeers: AnyObject, Sendable {
    /// This instance's name among the others.
    var instanceName: String { get }
    /// The live instance other than this one that runs session `id`; nil when this one does, nobody
    /// does, or it cannot be told now.
    func owner(of id: String) -> String?
    /// Every instance that runs at least one session now (this one included when it does).
    func hostingInstances() -> [String]
    /// Sends `request` to `instance`, which answers it as its own (the sender checked access), and
    /// calls `completion` with the answer or why there is none.
    func forward(
        _ request: ForwardedRequest, to instance: String,
        completion: @escaping @Sendable (Result<ForwardedResponse, ClusterError>) -> Void)
    /// Installs what answers requests other instances forward to this one.
    func serveForwardedRequests(
        _ handler: @escaping @Sendable (ForwardedRequest, @escaping @Sendable (ForwardedResponse) -> Void) -> Void)
    /// Whether `instance` is alive (its heartbeat is current); false when that cannot be told now.
    func isAlive(_ instance: String) -> Bool

    // MARK: Relayed subscriptions

    /// A fresh subject only this instance listens on; the events sent to it reach `handler` in order.
    /// Nil when it cannot listen now.
    func openRelayInbox(_ handler: @escaping @Sendable (RelayedEvent) -> Void) -> RelayInbox?
    /// Sends one event of a relayed subscription to `subject`; false when it cannot be sent now.
    func sendRelayed(_ event: RelayedEvent, to subject: String) -> Bool
}

/// One event of a subscription relayed from the instance that runs a session to one that streams it.
struct RelayedEvent: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case state(version: UInt64)
        case pulse(name: String, count: UInt64)
        /// The session was deleted.
        case end
        /// The subscription ended otherwise (`session_moved`, …).
        case error(code: String, message: String)
    }

    var kind: Kind
    /// The state or the pulse's value; empty for the others.
    var json: [UInt8]
}

/// A subject this instance listens on for relayed events, until closed.
final class RelayInbox: Sendable {
    let subject: String
    private let closer: @Sendable () -> Void

    init(subject: String, close: @escaping @Sendable () -> Void) {
        self.subject = subject
        closer = close
    }

    /// Stops listening.
    func close() { closer() }
}

/// A request sent on to the instance that runs its session.
struct ForwardedRequest: Sendable, Equatable {
    var method: String
    /// Path and query, as the client sent them.
    var target: String
    /// The body's `Content-Type`, if it has one.
    var contentType: String?
    var body: [UInt8]
    /// For a subscription relayed to another instance: the subject its events go to, and that instance.
    var relay: (subject: String, instance: String)? = nil

    static func == (a: ForwardedRequest, b: ForwardedRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.contentType == b.contentType && a.body == b.body
            && a.relay?.subject == b.relay?.subject
            && a.relay?.instance == b.relay?.instance
    }
}

/// The answer to a ``ForwardedRequest``.
struct ForwardedResponse: Sendable, Equatable {
    var status: Int
    var headers: [ForwardedHeader]
    var body: [UInt8]
}

/// One header field of a ``ForwardedResponse``.
struct ForwardedHeader: Sendable, Equatable {
    var name: String
    var value: String
}

/// Why a forwarded request has no answer.
struct ClusterError: Error, Sendable, CustomStringConvertible {
    let description: String
}
