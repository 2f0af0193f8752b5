import HTTPServer
import JSONCodec
import Logs
import Synchronization

/// The HTTP face of the service: routes every request of API.md to the sessions, checks admin auth,
/// answers CORS, counts metrics. Plug it into an ``HTTPServer`` as its responder (``ReactorServer``
/// does that for you).
public final class ReactorService: HTTPResponder {
    public let catalog: ReactorCatalog
    public let store: SessionStore
    public let context: SessionContext
    let configuration: ServerConfiguration
    let authenticator: AdminAuthenticator
    let router = Router()
    /// Each reactor's specialized `sendAction` by name: the action route copies one closure, not a definition.
    let senders: [String: ReactorDefinition.SendAction]
    let cors: CORSPolicy
    let openAPIDocument: [UInt8]
    let reactorsDocument: [UInt8]
    let accessLog: Bool
    let sweep = Mutex<ScheduledWork?>(nil)
    let accepting = Atomic<Bool>(true)

    var metrics: ServiceMetrics { context.metrics }
    var logger: Logger { context.logger }

    public init(catalog: ReactorCatalog, configuration: ServerConfiguration, adminToken: String, clock: any ServiceClock = SystemServiceClock(), logger: Logger, storage: SessionStorage? = nil) {
        self.catalog = catalog
        senders = Dictionary(catalog.definitions.map { ($0.name, $0.sendAction) }, uniquingKeysWith: { _, last in last })
        self.configuration = configuration
        var limits = SessionContext.Limits()
        limits.actionLogLimit = configuration.sessions.actionLogLimit
        limits.actionLogBytes = configuration.sessions.actionLogBytes
        limits.stubRecordLimit = configuration.sessions.stubRecordLimit
        limits.pulseBuffer = configuration.sse.pulseBuffer
        context = SessionContext(limits: limits, clock: clock, logger: logger, storage: storage)
        store = SessionStore(limit: configuration.sessions.limit, storage: storage, maxResident: configuration.sessions.maxResident)
        authenticator = AdminAuthenticator(token: adminToken)
        cors = CORSPolicy(allowedOrigins: configuration.cors.allowedOrigins)
        openAPIDocument = OpenAPIDocument.json(reactors: catalog.definitions.map(\.name))
        reactorsDocument = Self.reactorsJSON(catalog)
        accessLog = configuration.log.accessLog
        attachStorage()
        scheduleIdleSweep()
    }

    /// Stops answering `/healthz` with 200 and stops expiring sessions (at shutdown).
    public func stop() {
        accepting.store(false, ordering: .relaxed)
        sweep.withLock {
            $0?.cancel()
            $0 = nil
        }
    }

    // MARK: HTTPResponder

    public func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) {
        // The exchange takes the request over; it is read through the exchange from here on.
        let exchange = Exchange(request: request, writer: writer, service: self)
        if exchange.method == "OPTIONS" {
            return preflight(exchange)
        }
        switch router.match(method: exchange.method, target: exchange.request.target) {
        case .notFound:
            exchange.fail(.notFound(exchange.request.path))
        case .methodNotAllowed(let allowed):
            exchange.fail(.methodNotAllowed(exchange.method, exchange.request.path, allowed: allowed))
        case .route(let route, let id):
            exchange.route = route
            if route.isAdmin, !authenticator.isAuthorized(authorization: exchange.request.headers["Authorization"]) {
                return exchange.fail(.unauthorized)
            }
            handle(route, id: id ?? "", exchange)
        }
    }

    public func response(for rejection: HTTPRejection) -> HTTPResponse {
        let error = APIError(rejection)
        return HTTPResponse(status: HTTPStatus(code: error.status), headers: jsonHeaders(), body: error.body)
    }

    func handle(_ route: Route, id: String, _ exchange: Exchange) {
        switch route {
        case .page:
            exchange.reply(200, body: Array(WebPage.html.utf8), contentType: WebPage.contentType, headers: [("Content-Security-Policy", WebPage.contentSecurityPolicy)])
        case .health:
            if accepting.load(ordering: .relaxed) {
                exchange.reply(200, json: Array(#"{"status":"ok"}"#.utf8))
            } else {
                exchange.reply(503, json: Array(#"{"status":"shutting_down"}"#.utf8))
            }
        case .metrics:
            exchange.reply(200, body: Array(metrics.render().utf8), contentType: PrometheusText.contentType)
        case .openAPI:
            exchange.reply(200, json: openAPIDocument)
        case .reactors:
            exchange.reply(200, json: reactorsDocument)
        case .createSession: createSession(exchange)
        case .getSession: withSession(id, exchange) { session in exchange.reply(200, json: Self.sessionJSON(session, session.snapshot())) }
        case .deleteSession: deleteSession(id, exchange)
        case .postAction: postAction(id, exchange)
        case .events: subscribe(id, exchange)
        case .adminSessions: adminSessions(exchange)
        case .adminActions: adminActions(id, exchange)
        case .adminStub: adminStub(id, exchange)
        case .adminState: adminState(id, exchange)
        case .adminVersion: adminVersion(id, exchange)
        case .adminFork: adminFork(id, exchange)
        }
    }

    /// Looks the session up (404 when unknown) and marks it active.
    func withSession(_ id: String, _ exchange: Exchange, _ body: (any HostedSession) -> Void) {
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        session.touch(at: context.clock.monotonicNanoseconds())
        body(session)
    }

    // MARK: CORS

    func preflight(_ exchange: Exchange) {
        let methods = router.methods(for: exchange.request.target)
        guard !methods.isEmpty else { return exchange.fail(.notFound(exchange.request.path)) }
        let allow = (methods + (methods.contains("GET") ? ["HEAD"] : []) + ["OPTIONS"]).joined(separator: ", ")
        guard let origin = exchange.request.headers["Origin"] else {
            return exchange.reply(204, body: [], contentType: nil, headers: [("Allow", allow)])
        }
        guard cors.allows(origin) else {
            return exchange.fail(APIError(status: 403, code: "origin_not_allowed", message: "origin \(JSONWriter.quoted(origin)) is not in cors.allowedOrigins"))
        }
        exchange.reply(204, body: [], contentType: nil, headers: [
            ("Allow", allow),
            ("Access-Control-Allow-Methods", allow),
            ("Access-Control-Allow-Headers", "Content-Type, Authorization, Last-Event-ID"),
            ("Access-Control-Max-Age", "600"),
        ])
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
        let expired = store.removeIdle(before: now - ttl)
        for session in expired {
            session.end()
            metrics.sessions.decrement()
        }
        if !expired.isEmpty {
            logger.info("expired idle sessions", ["count": .int(expired.count), "ttl_seconds": .double(configuration.sessions.idleTTLSeconds)])
        }
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
