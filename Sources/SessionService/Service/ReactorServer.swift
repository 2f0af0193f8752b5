import Posix
import Foundation
import HTTPServer
import Logs

/// The whole server: configuration, the HTTP server and the reactor service, in a few lines.
///
/// ```swift
/// var catalog = ReactorCatalog()
/// catalog.register("counter") { CounterReactor() }
/// let server = try ReactorServer(catalog: catalog, configuration: ServerConfiguration())
/// let address = try server.start()
/// print(server.startupSummary(address: address))   // the URL, the admin token, the data folder
/// server.waitUntilStopped()
/// ```
public final class ReactorServer: Sendable {
    public let configuration: ServerConfiguration
    public let service: ReactorService
    /// The admin bearer token in force (from the configuration, its file, or generated).
    public let adminToken: String
    /// Whether ``adminToken`` was generated at start (nothing configured one).
    public let adminTokenGenerated: Bool
    let http: HTTPServer
    let logger: Logger
    /// The journal, nil with `storage.memoryOnly`.
    public let storage: SessionStorage?

    /// Builds the server; nothing listens until ``start()``.
    public init(catalog: ReactorCatalog, configuration: ServerConfiguration, clock: any ServiceClock = SystemServiceClock(), logger: Logger = .disabled) throws(ConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        (adminToken, adminTokenGenerated) = try Self.resolveAdminToken(configuration.admin)
        storage = try Self.openStorage(configuration, logger: logger.labeled("storage"))
        let access = try SessionAccessMode.from(configuration.auth)
        if access.kind == .token, !configuration.storage.memoryOnly {
            // Until token hashes are journaled with their sessions, a restart would lock every session out.
            throw ConfigurationError("auth.sessions=token keeps its tokens in memory only so far: use it with storage.memoryOnly, or use jwt")
        }
        service = ReactorService(
            catalog: catalog, configuration: configuration, adminToken: adminToken, access: access, clock: clock,
            logger: logger.labeled("service"), storage: storage)
        var http = Self.httpConfiguration(configuration)
        if let storage {
            // Group commit: whatever a response or event is about to show is in the journal first.
            http.beforeWrite = { _ in storage.flushForOutput() }
        }
        // One clock for both: an injected clock then rules HTTP timeouts and keep-alive comments too.
        self.http = HTTPServer(configuration: http, responder: service, clock: clock, logger: logger.labeled("http"))
    }

    /// Binds and starts serving; returns the bound address (port 0 picks a free port).
    @discardableResult
    public func start() throws(IOError) -> SocketAddress {
        try http.start()
    }

    /// What a person starting the server needs to know, as plain lines: the URL to open (a terminal
    /// turns it into a link), the admin token and whether it changes at every start, and where
    /// sessions are kept with how many were recovered.
    public func startupSummary(address: SocketAddress) -> String {
        // An unspecified address is not a link anyone can open: show loopback, and say what else listens.
        var lines: [String]
        switch address.host {
        case "0.0.0.0": lines = ["listening on http://127.0.0.1:\(address.port)/ (and every IPv4 interface)"]
        case "::": lines = ["listening on http://[::1]:\(address.port)/ (and every interface)"]
        default: lines = ["listening on http://\(address.isIPv6 ? "[\(address.host)]" : address.host):\(address.port)/"]
        }
        if adminTokenGenerated {
            lines.append("admin token: \(adminToken) (generated: it changes at every start unless REACTOR_ADMIN_TOKEN, admin.token or admin.tokenFile sets one)")
        } else {
            lines.append("admin token: as configured (\(configuration.admin.tokenFile.isEmpty ? "REACTOR_ADMIN_TOKEN or admin.token" : "admin.tokenFile \(configuration.admin.tokenFile)"))")
        }
        switch service.access.kind {
        case .open where !Self.isLoopback(configuration.http.host):
            lines.append("WARNING: sessions are open (auth.sessions=open) on \(configuration.http.host), beyond loopback: anyone who can reach this port and knows or guesses a session id can read, change and delete it. Set auth.sessions=token or jwt (README: Access to sessions)")
        case .open:
            lines.append("sessions: open (anyone who knows a session id may use it; fine on loopback, see auth.sessions before exposing it)")
        case .token:
            lines.append("sessions: token (each session needs the token POST /sessions returned)")
        case .jwt:
            lines.append("sessions: jwt (requests need an HS256 token from your backend)")
        }
        if let storage {
            let count = storage.count
            lines.append("data folder: \(configuration.storage.dataDir) (\(count) \(count == 1 ? "session" : "sessions") recovered)")
        } else {
            lines.append("sessions are kept in memory only (storage.memoryOnly): a restart forgets them")
        }
        return lines.joined(separator: "\n")
    }

    /// Whether the listening address is reachable only from this machine.
    static func isLoopback(_ host: String) -> Bool {
        guard let address = IPAddress(host) else { return false }
        return [IPNetwork("127.0.0.0/8"), IPNetwork("::1")].compactMap { $0 }.contains(address)
    }

    /// Graceful shutdown: stop accepting, finish in-flight requests, end streams.
    public func shutdown() {
        service.stop()
        http.shutdown()
    }

    /// Blocks until the server has stopped, then syncs and closes the journal.
    public func waitUntilStopped() {
        http.waitUntilStopped()
        storage?.close()
    }

    /// Opens the data directory and recovers the journal's index, unless memory-only.
    static func openStorage(_ configuration: ServerConfiguration, logger: Logger) throws(ConfigurationError) -> SessionStorage? {
        let settings = configuration.storage
        guard !settings.memoryOnly else { return nil }
        var options = SessionStorage.Options(directory: settings.dataDir)
        options.fsync = FsyncPolicy(rawValue: settings.fsync) ?? .batch
        options.fsyncWindowMilliseconds = settings.fsyncWindowMilliseconds
        options.snapshotEvery = settings.snapshotEvery
        options.segmentBytes = settings.segmentBytes
        options.actionLogLimit = configuration.sessions.actionLogLimit
        options.actionLogBytes = configuration.sessions.actionLogBytes
        do {
            return try SessionStorage(options: options, logger: logger)
        } catch {
            throw ConfigurationError("storage.dataDir: cannot open the journal in \(settings.dataDir): \(error.description) (or run with --memory-only)")
        }
    }

    /// The admin token: `admin.token` (or REACTOR_ADMIN_TOKEN), else the first line of `admin.tokenFile`,
    /// else a fresh random one.
    static func resolveAdminToken(_ admin: ServerConfiguration.Admin) throws(ConfigurationError) -> (String, Bool) {
        if !admin.token.isEmpty { return (admin.token, false) }
        if !admin.tokenFile.isEmpty {
            guard let data = FileManager.default.contents(atPath: admin.tokenFile) else {
                throw ConfigurationError("admin.tokenFile: cannot read \(admin.tokenFile)")
            }
            let token = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map { String($0).trimmed } ?? ""
            guard !token.isEmpty else { throw ConfigurationError("admin.tokenFile: \(admin.tokenFile) holds no token on its first line") }
            return (token, false)
        }
        return (AdminAuthenticator.generateToken(), true)
    }

    static func httpConfiguration(_ configuration: ServerConfiguration) -> HTTPServer.Configuration {
        let http = configuration.http
        var result = HTTPServer.Configuration()
        result.host = http.host
        result.port = http.port
        result.loopCount = http.loops == 0 ? nil : http.loops
        result.backlog = http.backlog
        result.limits.maxRequestLineBytes = http.maxRequestLineBytes
        result.limits.maxHeaderBytes = http.maxHeaderBytes
        result.limits.maxHeaderCount = http.maxHeaderCount
        result.limits.maxBodyBytes = http.maxBodyBytes
        result.requestHeadTimeout = .seconds(http.headTimeoutSeconds)
        result.idleTimeout = .seconds(http.idleTimeoutSeconds)
        result.bodyTimeout = .seconds(http.bodyTimeoutSeconds)
        result.writeTimeout = .seconds(http.writeTimeoutSeconds)
        result.shutdownTimeout = .seconds(http.shutdownDeadlineSeconds)
        result.maxConnections = http.maxConnections == 0 ? nil : http.maxConnections
        result.maxConnectionsPerAddress = http.maxConnectionsPerAddress == 0 ? nil : http.maxConnectionsPerAddress
        // A trusted proxy carries many clients' connections; both lists were checked when loaded.
        let limits = configuration.limits
        result.connectionLimitExemptions = (limits.exemptAddresses + limits.trustedProxies).compactMap(IPAddressRange.init)
        result.eventStreamKeepAliveInterval = .seconds(configuration.sse.keepAliveSeconds)
        result.eventStreamBufferLimit = configuration.sse.subscriberBufferBytes
        return result
    }
}
