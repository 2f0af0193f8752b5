import Dispatch
import HTTPServer
import JSONCodec
import Logs
import Synchronization
import Tokens

/// The HTTP face of the service: routes every request of API.md through its route's middleware chain
/// (metrics, access log, CORS, admin auth) to the responder of the route. Plug it into an
/// `HTTPServer` as its responder (``ReactorServer`` does that for you).
public final class ReactorService: HTTPResponder {
    public let catalog: ReactorCatalog
    public let store: SessionStore
    /// Whether storage loads wait on the network (``StorageBackend/waitsOnNetwork``), read once.
    let storageWaitsOnNetwork: Bool
    public let context: SessionContext
    let configuration: ServerConfiguration
    let router = Router()
    /// Streams of sessions another instance runs, and those other instances hold here.
    let relays = RelayedSubscriptions()
    /// Streams opened with a JWT, ended at its `exp` plus the leeway (jwt access mode).
    let expiringStreams: ExpiringStreams
    /// Each route's middleware and responder, by `Route` index; set once, at the end of `init`.
    nonisolated(unsafe) private(set) var chains: [MiddlewareChain] = []
    /// For requests no route takes (404, 405).
    nonisolated(unsafe) private(set) var unroutedChain: MiddlewareChain!
    /// For `OPTIONS` (CORS preflight).
    nonisolated(unsafe) private(set) var preflightChain: MiddlewareChain!
    /// Each reactor's specialized `sendAction`, by session class: the action route copies one closure, not a
    /// definition.
    let senders: ActionSenders
    /// `/openapi.json` and `/reactors`, built once.
    let documents: ServiceDocuments
    /// Reads request bodies; its limit is `http.maxBodyBytes`, so one limit gives one answer (413).
    let bodyParser: JSONParser
    let sweep = Mutex<ScheduledWork?>(nil)
    /// The sessions a crash of their reactor quarantined, and what crashed them.
    let crashes: CrashQuarantine
    let accepting = Atomic<Bool>(true)
    /// Who a request comes from and which clients the per-client limits spare.
    let clients: ClientLimits

    var metrics: ServiceMetrics { context.metrics }
    var logger: Logger { context.logger }

    /// The other instances sharing the storage (a NATS backend's cluster); nil with a backend only this process uses.
    let peers: (any ClusterPeers)?

    /// Who may use sessions (`auth.sessions`).
    public let access: SessionAccessMode

    /// A service for `catalog` with its sessions in memory only.
    public convenience init(
        catalog: ReactorCatalog, configuration: ServerConfiguration, adminToken: String, access: SessionAccessMode,
        clock: any ServiceClock = SystemServiceClock(), logger: Logger
    ) {
        self.init(
            catalog: catalog, configuration: configuration, adminToken: adminToken, access: access, clock: clock,
            logger: logger, storage: nil)
    }

    /// A service for `catalog` with its sessions kept in `storage` (nil: memory only).
    init(
        catalog: ReactorCatalog, configuration: ServerConfiguration, adminToken: String, access: SessionAccessMode,
        clock: any ServiceClock = SystemServiceClock(), logger: Logger, storage: (any StorageBackend)?,
        peers: (any ClusterPeers)? = nil
    ) {
        self.access = access
        self.peers = peers
        self.catalog = catalog
        senders = ActionSenders(catalog.definitions)
        self.configuration = configuration
        var limits = SessionContext.Limits()
        limits.actionLogLimit = configuration.sessions.actionLogLimit
        limits.actionLogBytes = configuration.sessions.actionLogBytes
        limits.stubRecordLimit = configuration.sessions.stubRecordLimit
        limits.maxQueuedActions = configuration.sessions.maxQueuedActions
        limits.pulseBuffer = configuration.sse.pulseBuffer
        limits.maxStateBytes = configuration.sessions.maxStateBytes
        limits.maxBodyBytes = configuration.http.maxBodyBytes
        limits.snapshotEvery = configuration.storage.snapshotEvery
        limits.slowReduceNanoseconds = UInt64(configuration.log.slowReduceMilliseconds) * 1_000_000
        bodyParser = limits.bodyParser
        context = SessionContext(limits: limits, clock: clock, logger: logger, storage: storage)
        expiringStreams = ExpiringStreams(clock: clock, ended: context.metrics.streamsEndedJWTExpired)
        let store = SessionStore(
            limit: configuration.sessions.limit, catalog: catalog, context: context,
            maxResident: configuration.sessions.maxResident)
        self.store = store
        storageWaitsOnNetwork = storage?.waitsOnNetwork ?? false
        if let storage {
            storage.attach(store)
            context.metrics.storageMetrics.withLock { $0 = storage }
        }
        let folder = storage == nil ? nil : CrashFolder(path: configuration.storage.dataDir + "/crashes")
        crashes = CrashQuarantine(
            folder: folder, storage: storage, logger: logger, gauge: context.metrics.sessionsQuarantined)
        documents = ServiceDocuments(catalog: catalog, settings: .init(configuration, access: access.kind))
        clients = ClientLimits(
            trustedProxies: configuration.limits.trustedProxies, exemptAddresses: configuration.limits.exemptAddresses,
            subscribersPerAddress: configuration.sse.maxSubscribersPerAddress)
        // Set before the service is handed to a server, and never again: requests read them unlocked.
        (chains, unroutedChain, preflightChain) = buildChains(
            configuration, adminToken: adminToken, access: access,
            tokenHash: { [store] id in store.accessTokenHash(for: id) },
            metrics: context.metrics, logger: logger, clock: clock)
        // Before any request can load a session: one that crashed the server must not run again by itself.
        crashes.quarantineAtStart()
        noteStoredSessions()
        startTimers()
        if let peers { serveForwardedRequests(peers) }
        scheduleIdleSweep()
    }

    /// Stops answering `/healthz` with 200 and stops expiring sessions (at shutdown).
    public func stop() {
        accepting.store(false, ordering: .relaxed)
        context.timers.stop()
        sweep.withLock {
            $0?.cancel()
            $0 = nil
        }
    }

    // MARK: HTTPResponder

    public func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) {
        // The exchange takes the request over; it is read through the exchange from here on.
        let exchange = Exchange(request: request, writer: writer)
        if exchange.method == "OPTIONS" {
            return preflightChain.run(exchange)
        }
        let method = exchange.method
        switch exchange.request.withTargetBytes({ router.match(method: method, targetBytes: $0) }) {
        case .route(let route, let id):
            exchange.route = route
            exchange.id = id ?? ""
            chains[route.index].run(exchange)
        case .notFound, .methodNotAllowed, .notImplemented:
            unroutedChain.run(exchange)
        }
    }

    public func response(for rejection: HTTPRejection) -> HTTPResponse {
        let error = APIError(rejection)
        return HTTPResponse(
            status: HTTPStatus(code: error.status), headers: jsonHeaders(), body: error.body + [UInt8(ascii: "\n")])
    }

    /// Builds every route's chain: metrics and the access log around everything, then CORS, then the
    /// access check the route's table row asks for.
    func buildChains(
        _ configuration: ServerConfiguration, adminToken: String, access: SessionAccessMode,
        tokenHash: @escaping @Sendable (String) -> SessionTokenHash?,
        metrics: ServiceMetrics, logger: Logger, clock: any ServiceClock
    ) -> (routes: [MiddlewareChain], unrouted: MiddlewareChain, preflight: MiddlewareChain) {
        var outer: [any ServiceMiddleware] = [MetricsMiddleware(metrics: metrics)]
        if configuration.log.accessLog { outer.append(AccessLogMiddleware(logger: logger, clock: clock)) }
        let cors = CORSMiddleware(allowedOrigins: configuration.cors.allowedOrigins)
        if cors.isEnabled { outer.append(cors) }
        let limits = configuration.limits
        let resolver = clients.resolver
        let exempt = clients.exempt
        if limits.requestsPerSecond > 0 {
            let buckets = TokenBuckets(rate: Double(limits.requestsPerSecond), burst: limits.requestBurst, clock: clock)
            outer.append(
                RateLimitMiddleware(
                    buckets: buckets, resolver: resolver, exempt: exempt, what: "requests",
                    settings: "limits.requestsPerSecond"))
        }
        var creation: [any ServiceMiddleware] = []
        if limits.sessionsPerMinute > 0 {
            let buckets = TokenBuckets(
                rate: Double(limits.sessionsPerMinute) / 60, burst: limits.sessionBurst, clock: clock)
            creation.append(
                RateLimitMiddleware(
                    buckets: buckets, resolver: resolver, exempt: exempt, what: "new sessions",
                    settings: "limits.sessionsPerMinute"))
        }
        var acting: [any ServiceMiddleware] = []
        if limits.actionBytesPerMinute > 0 {
            let perMinute = Double(limits.actionBytesPerMinute)
            let buckets = TokenBuckets(rate: perMinute / 60, burst: limits.actionBytesPerMinute, clock: clock)
            acting.append(ActionBytesMiddleware(buckets: buckets, resolver: resolver, exempt: exempt, metrics: metrics))
        }
        let admin = AdminAuthMiddleware(authenticator: AdminAuthenticator(token: adminToken))
        // Chains and metrics rows are indexed by the route's position: the table must follow the cases.
        precondition(Route.table.map(\.route) == Route.allCases, "Route.table must list every Route once, in order")
        let routes = Route.table.map { entry in
            var layers = outer
            switch entry.access {
            case .admin: layers.append(admin)
            case .createSession:
                layers += creation
                if access.kind != .open {
                    layers.append(SessionAccessMiddleware(mode: access, right: nil, tokenHash: tokenHash, clock: clock))
                }
            case .session(let right):
                if access.kind != .open {
                    layers.append(
                        SessionAccessMiddleware(mode: access, right: right, tokenHash: tokenHash, clock: clock))
                }
                // After the access check: only those who may act spend their budget.
                if entry.route == .postAction { layers += acting }
            case .eachSession:
                // Only the JWT itself is checked here; the route checks each session (tokens, rights).
                if access.kind == .jwt {
                    layers.append(SessionAccessMiddleware(mode: access, right: nil, tokenHash: tokenHash, clock: clock))
                }
            case .open: break
            }
            let needs = entry.needs
            let responder = entry.responder
            // Unowned (unsafe): the chains live exactly as long as the service that holds them, and a
            // checked unowned read costs a runtime call per request.
            return MiddlewareChain(layers) { [unowned(unsafe) self] exchange in
                self.respond(exchange, needs, responder)
            }
        }
        let unrouted = MiddlewareChain(outer) { [unowned(unsafe) self] exchange in self.answerUnrouted(exchange) }
        let preflight = MiddlewareChain(outer) { [unowned(unsafe) self] exchange in
            let methods = self.router.methods(for: exchange.request.target)
            guard !methods.isEmpty else { return exchange.fail(.notFound(exchange.request.path)) }
            CORSMiddleware.preflight(exchange, methods: methods, policy: cors.isEnabled ? cors : nil)
        }
        return (routes, unrouted, preflight)
    }

    /// 404 for a path no route has, 405 with `Allow` for a method the path does not take, 501 for a
    /// method no route takes on a path no route has.
    func answerUnrouted(_ exchange: Exchange) {
        switch router.match(method: exchange.method, target: exchange.request.target) {
        case .methodNotAllowed(let allowed):
            exchange.fail(.methodNotAllowed(exchange.method, exchange.request.path, allowed: allowed))
        case .notImplemented:
            exchange.fail(.notImplemented(exchange.method))
        case .notFound, .route:
            exchange.fail(.notFound(exchange.request.path))
        }
    }

    /// Runs a route's responder once what the route needs is at hand: off the event loop when it may wait on
    /// storage over the network (a worker thread answers: the writer takes the answer from any thread, and the
    /// connection puts it in order with the connection's other answers); without waiting for stored records
    /// when it shows no session (`/metrics` must answer while storage fails, which is when an operator looks).
    func respond(_ exchange: Exchange, _ needs: RouteNeeds, _ responder: @escaping Route.Responder) {
        if storageWaitsOnNetwork, !exchange.onWorker,
            needs.waitsOnStorage(sessionResident: store.isResident(exchange.id))
        {
            exchange.onWorker = true
            return Self.storageWork.async { self.respond(exchange, needs, responder) }
        }
        if !needs.showsSessionState { exchange.dependsOn = 0 }
        responder(self, exchange)
    }

    /// Where routes that wait on a storage backend over the network run (loading a session claims it
    /// and reads it back, a hand-off waits for the owner), so an event loop never waits on the network.
    static let storageWork = DispatchQueue(label: "reactor.storage.work", qos: .userInitiated, attributes: .concurrent)

    /// Looks the session up (404 when unknown) and marks it active.
    func withSession(_ id: String, _ exchange: Exchange, _ body: (any HostedSession) -> Void) {
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        session.touch(at: context.clock.monotonicNanoseconds())
        body(session)
    }

    // MARK: Idle expiry

    func scheduleIdleSweep() {
        let ttl = configuration.sessions.idleTTLSeconds
        let passivate = store.storage == nil ? 0 : configuration.sessions.passivateAfterSeconds
        let periods = [ttl / 4, passivate / 4, store.storage == nil ? 0 : 5].filter { $0 > 0 }
        guard let period = periods.min() else { return }
        let interval = Duration.milliseconds(Int64(min(period, 60) * 1000).clamped(to: 10...60_000))
        let work = context.clock.schedule(after: interval) { [weak self] in
            guard let self else { return }
            if ttl > 0 { self.expireIdleSessions() }
            self.maintainStorage()
            self.scheduleIdleSweep()
        }
        sweep.withLock { $0 = work }
    }

    /// Ends sessions idle (no request, no subscriber) for longer than `sessions.idleTTLSeconds`.
    func expireIdleSessions() {
        let ttl = UInt64(configuration.sessions.idleTTLSeconds * 1e9)
        let now = context.clock.monotonicNanoseconds()
        guard now > ttl else { return }
        let (resident, storedOnly) = store.removeIdle(before: now - ttl)
        for session in resident { session.end() }
        let count = resident.count + storedOnly
        for _ in 0..<count { metrics.sessions.decrement() }
        if count > 0 {
            logger.info(
                "expired idle sessions",
                ["count": .int(count), "ttl_seconds": .double(configuration.sessions.idleTTLSeconds)])
        }
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
