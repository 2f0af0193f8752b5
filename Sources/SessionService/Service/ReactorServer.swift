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
        service = ReactorService(catalog: catalog, configuration: configuration, adminToken: adminToken, clock: clock, logger: logger.labeled("service"), storage: storage)
        var http = Self.httpConfiguration(configuration)
        if let storage {
            // Group commit: whatever a response or event is about to show is in the journal first.
            http.beforeWrite = { _ in storage.flushForOutput() }
        }
        self.http = HTTPServer(configuration: http, responder: service, logger: logger.labeled("http"))
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
        result.eventStreamKeepAliveInterval = .seconds(configuration.sse.keepAliveSeconds)
        result.eventStreamBufferLimit = configuration.sse.subscriberBufferBytes
        return result
    }
}
