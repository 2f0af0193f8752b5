import Dispatch
import Logs
import NATS

/// The cluster of instances sharing a NATS backend, as the service sees it: who runs a session (the storage's
/// claims), which instances run any, requests sent on to them (`<prefix>.forward.<instance>`: the method and
/// target in headers, the body as payload; the answer's status and headers in headers, its body as payload), and
/// relayed subscriptions. Built beside the storage on the same connection; the storage knows nothing of it.
final class NATSCluster: ClusterPeers {
    let storage: NATSStorage
    private var connection: NATSConnection { storage.connection }
    private var names: NATSStorageNames { storage.names }
    private var options: NATSStorage.Options { storage.options }
    private var logger: Logger { storage.logger }

    init(storage: NATSStorage) {
        self.storage = storage
    }

    var instanceName: String { options.instance }

    func owner(of id: String) -> String? { storage.claims.liveOwner(of: id) }

    func hostingInstances() -> [String] { storage.claims.mirror.instances }

    func forward(
        _ request: ForwardedRequest, to instance: String,
        completion: @escaping @Sendable (Result<ForwardedResponse, ClusterError>) -> Void
    ) {
        var headers: NATSHeaders = ["Reactor-Method": request.method, "Reactor-Target": request.target]
        if let contentType = request.contentType { headers["Content-Type"] = contentType }
        if let relay = request.relay {
            headers["Reactor-Relay-To"] = relay.subject
            headers["Reactor-Relay-Instance"] = relay.instance
        }
        let subject = names.forward(instance)
        do throws(NATSError) {
            try connection.request(subject, payload: request.body, headers: headers, timeout: options.requestTimeout) {
                result in
                switch result {
                case .failure(let error):
                    completion(.failure(ClusterError(description: "instance \(instance) did not answer: \(error)")))
                case .success(let message):
                    guard let status = message.headers["Reactor-Status"].flatMap(Int.init), (100...599).contains(status)
                    else {
                        return completion(
                            .failure(ClusterError(description: "instance \(instance) answered without a status")))
                    }
                    let fields = message.headers.fields.filter { $0.name.lowercased() != "reactor-status" }.map {
                        ForwardedHeader(name: $0.name, value: $0.value)
                    }
                    completion(.success(ForwardedResponse(status: status, headers: fields, body: message.payload)))
                }
            }
        } catch {
            completion(.failure(ClusterError(description: "cannot send to instance \(instance): \(error)")))
        }
    }

    func serveForwardedRequests(
        _ handler: @escaping @Sendable (ForwardedRequest, @escaping @Sendable (ForwardedResponse) -> Void) -> Void
    ) {
        let connection = self.connection
        let logger = self.logger
        do {
            _ = try connection.subscribe(to: names.forward(options.instance)) { message in
                guard let replyTo = message.replyTo, let method = message.headers["Reactor-Method"],
                    let target = message.headers["Reactor-Target"]
                else { return }
                var relay: (subject: String, instance: String)?
                if let subject = message.headers["Reactor-Relay-To"],
                    let instance = message.headers["Reactor-Relay-Instance"]
                {
                    relay = (subject, instance)
                }
                let request = ForwardedRequest(
                    method: method, target: target, contentType: message.headers["Content-Type"], body: message.payload,
                    relay: relay)
                // Off the connection's thread: the answer may load a session (JetStream round trips).
                DispatchQueue.global().async {
                    handler(request) { response in
                        var headers: NATSHeaders = ["Reactor-Status": String(response.status)]
                        for field in response.headers { headers[field.name] = field.value }
                        try? connection.publish(replyTo, payload: response.body, headers: headers)
                    }
                }
            }
        } catch {
            logger.error(
                "cannot listen for requests forwarded by other instances; "
                    + "admin routes reach this instance's sessions only here",
                ["error": .string("\(error)")])
        }
    }

    func isAlive(_ instance: String) -> Bool { storage.claims.isAlive(instance) }

    // MARK: Relayed subscriptions: `<prefix>.relay.<instance>.<token>`, one per session streamed from elsewhere;
    // the event's kind and numbers in headers, its JSON as payload.

    func openRelayInbox(_ handler: @escaping @Sendable (RelayedEvent) -> Void) -> RelayInbox? {
        let subject = names.relay(options.instance, OrderedConsumer.randomToken())
        do {
            let subscription = try connection.subscribe(to: subject) { message in
                if let event = Self.relayedEvent(message) { handler(event) }
            }
            return RelayInbox(subject: subject) { subscription.unsubscribe() }
        } catch {
            logger.warning("cannot listen for a relayed subscription", ["error": .string("\(error)")])
            return nil
        }
    }

    func sendRelayed(_ event: RelayedEvent, to subject: String) -> Bool {
        var headers = NATSHeaders()
        switch event.kind {
        case .state(let version):
            headers["Reactor-Event"] = "state"
            headers["Reactor-Version"] = String(version)
        case .pulse(let name, let count):
            headers["Reactor-Event"] = "pulse"
            headers["Reactor-Pulse"] = name
            headers["Reactor-Count"] = String(count)
        case .end:
            headers["Reactor-Event"] = "end"
        case .error(let code, let message):
            headers["Reactor-Event"] = "error"
            headers["Reactor-Code"] = code
            headers["Reactor-Message"] = message
        }
        do {
            try connection.publish(subject, payload: event.json, headers: headers)
            return true
        } catch {
            return false
        }
    }

    /// A relayed event read back; nil for anything else.
    static func relayedEvent(_ message: NATSMessage) -> RelayedEvent? {
        let kind: RelayedEvent.Kind
        switch message.headers["Reactor-Event"] {
        case "state"?:
            guard let version = message.headers["Reactor-Version"].flatMap(UInt64.init) else { return nil }
            kind = .state(version: version)
        case "pulse"?:
            guard let name = message.headers["Reactor-Pulse"],
                let count = message.headers["Reactor-Count"].flatMap(UInt64.init)
            else { return nil }
            kind = .pulse(name: name, count: count)
        case "end"?:
            kind = .end
        case "error"?:
            kind = .error(
                code: message.headers["Reactor-Code"] ?? SubscriptionEnd.movedCode,
                message: message.headers["Reactor-Message"] ?? "")
        default:
            return nil
        }
        return RelayedEvent(kind: kind, json: message.payload)
    }
}
