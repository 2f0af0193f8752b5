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

    /// Builds the server; nothing listens until ``start()``.
    public init(catalog: ReactorCatalog, configuration: ServerConfiguration, clock: any ServiceClock = SystemServiceClock(), logger: Logger = .disabled) throws(ConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        (adminToken, adminTokenGenerated) = try Self.resolveAdminToken(configuration.admin)
        service = ReactorService(catalog: catalog, configuration: configuration, adminToken: adminToken, clock: clock, logger: logger.labeled("service"))
        http = HTTPServer(configuration: Self.httpConfiguration(configuration), responder: service, logger: logger.labeled("http"))
    }

    /// Binds and starts serving; returns the bound address (port 0 picks a free port).
    @discardableResult
    public func start() throws(IOError) -> SocketAddress {
        try http.start()
    }

    /// Graceful shutdown: stop accepting, finish in-flight requests, end streams.
    public func shutdown() {
        service.stop()
        http.shutdown()
    }

    /// Blocks until the server has stopped.
    public func waitUntilStopped() { http.waitUntilStopped() }

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
        result.eventStreamKeepAliveInterval = .seconds(configuration.sse.keepAliveSeconds)
        result.eventStreamBufferLimit = configuration.sse.subscriberBufferBytes
        return result
    }
}
