import Dispatch
import NATS
import Synchronization

// The cluster as the service sees it: who runs a session, which instances run any, and requests
// sent on to them (`<prefix>.forward.<instance>`: the method and target in headers, the body as
// payload; the answer's status and headers in headers, its body as payload).
extension NATSStorage: ClusterPeers {
    var peers: (any ClusterPeers)? { self }

    var instanceName: String { options.instance }

    func owner(of id: String) -> String? {
        guard case .success(let entry?) = consistentEntry(claimsBucket, id), entry.operation == .put,
            let holder = OwnershipClaim(json: entry.value), holder.instance != options.instance
        else { return nil }
        guard case .success(let beat?) = consistentEntry(instancesBucket, holder.instance), beat.operation == .put,
            OwnershipClaim(json: beat.value)?.incarnation == holder.incarnation
        else { return nil }
        return holder.instance
    }

    func hostingInstances() -> [String] { claimHolders.instances }

    func forward(_ request: ForwardedRequest, to instance: String, completion: @escaping @Sendable (Result<ForwardedResponse, ClusterError>) -> Void) {
        var headers: NATSHeaders = ["Reactor-Method": request.method, "Reactor-Target": request.target]
        if let contentType = request.contentType { headers["Content-Type"] = contentType }
        let subject = names.forward(instance)
        do throws(NATSError) {
            try connection.request(subject, payload: request.body, headers: headers, timeout: options.requestTimeout) { result in
                switch result {
                case .failure(let error):
                    completion(.failure(ClusterError(description: "instance \(instance) did not answer: \(error)")))
                case .success(let message):
                    guard let status = message.headers["Reactor-Status"].flatMap(Int.init), (100...599).contains(status) else {
                        return completion(.failure(ClusterError(description: "instance \(instance) answered without a status")))
                    }
                    let fields = message.headers.fields.filter { $0.name.lowercased() != "reactor-status" }.map { ForwardedHeader(name: $0.name, value: $0.value) }
                    completion(.success(ForwardedResponse(status: status, headers: fields, body: message.payload)))
                }
            }
        } catch {
            completion(.failure(ClusterError(description: "cannot send to instance \(instance): \(error)")))
        }
    }

    func serveForwardedRequests(_ handler: @escaping @Sendable (ForwardedRequest, @escaping @Sendable (ForwardedResponse) -> Void) -> Void) {
        let connection = self.connection
        let logger = self.logger
        do {
            _ = try connection.subscribe(to: names.forward(options.instance)) { message in
                guard let replyTo = message.replyTo, let method = message.headers["Reactor-Method"], let target = message.headers["Reactor-Target"] else { return }
                let request = ForwardedRequest(method: method, target: target, contentType: message.headers["Content-Type"], body: message.payload)
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
            logger.error("cannot listen for requests forwarded by other instances; admin routes reach this instance's sessions only here", ["error": .string("\(error)")])
        }
    }
}

/// Which instance claims each session, as the claims bucket's watcher delivers its entries.
final class ClaimMirror: Sendable {
    private let holders = Mutex<[String: String]>([:])

    /// Notes one claims-bucket entry (a claim put, or given up).
    func apply(_ message: StoredMessage) {
        guard let dot = message.subject.utf8.lastIndex(of: UInt8(ascii: ".")) else { return }
        let id = String(message.subject[message.subject.utf8.index(after: dot)...])
        let holder = message.headers["KV-Operation"] == nil ? OwnershipClaim(json: message.payload)?.instance : nil
        holders.withLock { $0[id] = holder }
    }

    /// Every instance that claims a session, in order.
    var instances: [String] { Array(Set(holders.withLock { $0.values })).sorted() }
}
