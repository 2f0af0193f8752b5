import Dispatch
import HTTPServer
import JSONCodec
import Synchronization

// Several instances on one storage (the NATS backend): admin routes for a session another instance
// runs are answered by that instance, so looking at a session does not move it; the session list
// covers every instance.
extension ReactorService {
    /// Answers requests other instances forward to this one: admin routes of the sessions it runs,
    /// and its part of the session list. The sending instance checked the admin token.
    func serveForwardedRequests(_ peers: any ClusterPeers) {
        peers.serveForwardedRequests { [weak self] request, reply in
            guard let self else {
                let stopping = APIError(.shuttingDown, "the instance is stopping")
                return reply(ForwardedResponse(status: stopping.status, headers: [], body: stopping.body))
            }
            if let relay = request.relay { return serveRelay(request, relay, peers, reply) }
            if request.method == RelayedSession.checkMethod {
                return reply(ForwardedResponse(status: 200, headers: [], body: relays.unfed(request.body)))
            }
            let headers = HTTPHeaders(pairs: request.contentType.map { [("Content-Type", $0)] } ?? [])
            let forwarded = HTTPRequest(
                method: HTTPMethod(rawValue: request.method), target: request.target, headers: headers,
                body: request.body)
            let exchange = Exchange(forwarded: forwarded, channel: ForwardedReply(storage: store.storage, reply: reply))
            guard case .route(let route, let id) = router.match(method: exchange.method, target: request.target),
                Self.forwardable.contains(route)
            else {
                return exchange.fail(.notFound(exchange.request.path))
            }
            exchange.route = route
            exchange.id = id ?? ""
            let entry = Route.table[route.index]
            respond(exchange, entry.needs, entry.responder)
        }
    }

    /// Subscribes another instance's relay to a session here (its events go to `relay.subject`), or
    /// ends that subscription.
    func serveRelay(
        _ request: ForwardedRequest, _ relay: (subject: String, instance: String), _ peers: any ClusterPeers,
        _ reply: @escaping @Sendable (ForwardedResponse) -> Void
    ) {
        let answer = { (status: Int) in reply(ForwardedResponse(status: status, headers: [], body: [])) }
        guard case .route(.events, let id?) = router.match(method: "GET", target: request.target) else {
            return answer(404)
        }
        switch request.method {
        case RelayedSession.subscribeMethod:
            guard let storage = store.storage, let session = store.session(id) else { return answer(404) }
            let target = session.isPassivated ? store.session(id) ?? session : session
            answer(
                relays.hold(target, for: relay.subject, instance: relay.instance, peers: peers, storage: storage)
                    ? 200 : 503)
        case RelayedSession.unsubscribeMethod:
            relays.release(relay.subject)
            answer(200)
        default:
            answer(405)
        }
    }

    /// The session a stream follows: the one here (loaded if need be), or, when another live instance
    /// runs it, a relay of its events from there, so watching a session does not move it.
    func streamedSession(_ id: String) -> (any SessionStreamSource)? {
        if let storage = store.storage, let peers, !store.isResident(id), let owner = peers.owner(of: id),
            let reactor = storage.storedSession(id)?.reactor,
            let relayed = relays.session(id, owner: owner, reactor: reactor, context: context, peers: peers)
        {
            return relayed
        }
        return store.session(id)
    }

    /// The routes another instance may forward: those that act on one resident session or read its past, and the list.
    static let forwardable: Set<Route> = [
        .adminSessions, .adminActions, .adminStub, .adminState, .adminVersion, .adminFork, .adminTimers,
        .adminCancelTimer,
    ]

    /// Sends the exchange to the instance that runs session `id`, when another live one does; true
    /// when it did (the answer comes from there). Not resident here and run by nobody: false, and the
    /// route loads it here as usual. A quarantined session runs nowhere (a claim may be left by an owner
    /// that died of it): answered here.
    /// `orElse`, when given, answers instead when the owner does not (a route that can be answered from the
    /// stored records alone: an owner that just died should not make it fail).
    func forwardToOwner(_ id: String, _ exchange: Exchange, orElse fallback: (@Sendable () -> Void)? = nil) -> Bool {
        guard !exchange.isForwarded, let peers, !store.isResident(id), let owner = peers.owner(of: id) else {
            return false
        }
        guard store.storage?.storedSession(id)?.unavailable == nil else { return false }
        // The answer shows nothing this instance stored.
        exchange.dependsOn = 0
        let request = ForwardedRequest(
            method: exchange.method, target: exchange.request.target,
            contentType: exchange.request.headers["Content-Type"], body: exchange.request.body)
        peers.forward(request, to: owner) { result in
            switch result {
            case .success(let response):
                let contentType = response.headers.first { $0.name.lowercased() == "content-type" }?.value
                let others = response.headers.filter { $0.name.lowercased() != "content-type" }.map {
                    ($0.name, $0.value)
                }
                exchange.reply(response.status, body: response.body, contentType: contentType, headers: others)
            case .failure(let error):
                if let fallback { return Self.storageWork.async { fallback() } }
                exchange.fail(
                    .storageUnavailable(
                        "session \(id) runs on instance \(owner), which did not answer (\(error)); try again"))
            }
        }
        return true
    }

    /// The session entries (`GET /admin/sessions?scope=local`) of every other instance that runs
    /// sessions, then `done` with them; an instance that does not answer is named in `unreachable`.
    func gatherRemoteSessions(
        _ peers: any ClusterPeers,
        done: @escaping @Sendable (_ entries: [[UInt8]], _ ids: Set<String>, _ unreachable: [String]) -> Void
    ) {
        let others = peers.hostingInstances().filter { $0 != peers.instanceName }
        guard !others.isEmpty else { return done([], [], []) }
        let gathered = Mutex<(entries: [[UInt8]], ids: Set<String>, unreachable: [String], left: Int)>(
            ([], [], [], others.count))
        let parser = JSONParser(maxDepth: 16, maxBytes: 64 << 20)
        for instance in others {
            peers.forward(
                ForwardedRequest(method: "GET", target: "/admin/sessions?scope=local", contentType: nil, body: []),
                to: instance
            ) { result in
                var entries: [JSONValue]?
                if case .success(let response) = result, response.status == 200 {
                    entries = (try? parser.parse(response.body))?["sessions"]?.arrayValue
                }
                let finished = gathered.withLock { gathered -> Bool in
                    if let entries {
                        for entry in entries {
                            gathered.entries.append(entry.serialized())
                            if let id = entry["id"]?.stringValue { gathered.ids.insert(id) }
                        }
                    } else {
                        gathered.unreachable.append(instance)
                    }
                    gathered.left -= 1
                    return gathered.left == 0
                }
                if finished {
                    let all = gathered.withLock { $0 }
                    done(all.entries, all.ids, all.unreachable.sorted())
                }
            }
        }
    }
}
