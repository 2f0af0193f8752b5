import Foundation
import HTTPServer
import Logs
import NATS
import Posix
import Synchronization

/// The whole server: configuration, the HTTP server and the reactor service, in a few lines. To run it as
/// `reactor-server` runs (logs and start summary on standard error, signals, exit codes), call
/// ``ReactorServerCommand/serve(catalog:configuration:environment:)`` instead; this type is for embedding it in a
/// process that has its own lifecycle (tests, an app that also does other things).
///
/// ```swift
/// var catalog = ReactorCatalog()
/// catalog.register("counter") { CounterReactor() }
/// let server = try ReactorServer(catalog: catalog, configuration: ServerConfiguration())   // logs to standard error
/// let address = try server.start()   // throws IOError (EADDRINUSE…) when the port is taken
/// FileHandle.standardError.write(Data((server.startupSummary(address: address) + "\n").utf8))
/// server.waitUntilStopped()   // until server.shutdown(), from another thread
/// ```
public final class ReactorServer: Sendable {
    public let configuration: ServerConfiguration
    public let service: ReactorService
    /// The admin bearer token in force (from the configuration, its file, or generated).
    public let adminToken: String
    /// Whether ``adminToken`` was generated at start (nothing configured one).
    public let adminTokenGenerated: Bool
    /// Whether the configured admin token is shorter than ``minimumAdminTokenBytes`` (allowed on loopback
    /// only, with a warning at start).
    let adminTokenIsShort: Bool
    let http: HTTPServer
    let logger: Logger
    /// Where sessions are stored, nil with `storage.memoryOnly`.
    let storage: (any StorageBackend)?
    /// When ``shutdown()`` was first called, in the service clock's monotonic nanoseconds; 0 before.
    let shutdownBegan = Atomic<UInt64>(0)

    /// Builds the server; nothing listens until ``start()``. It logs to standard error as JSON lines at
    /// `log.level` unless given another logger (`.disabled` for none).
    public init(
        catalog: ReactorCatalog, configuration: ServerConfiguration, clock: any ServiceClock = SystemServiceClock(),
        logger: Logger? = nil
    ) throws(ConfigurationError) {
        let logger =
            logger
            ?? Logger(
                label: "reactor-server", level: LogLevel(name: configuration.log.level) ?? .info,
                handler: JSONLineLogHandler.standardError)
        self.configuration = configuration
        self.logger = logger
        (adminToken, adminTokenGenerated) = try Self.resolveAdminToken(configuration.admin)
        adminTokenIsShort = try Self.checkAdminTokenLength(adminToken, configuration)
        storage = try Self.openStorage(configuration, logger: logger.labeled("storage"))
        Self.installCrashHandler(configuration, storage: storage, logger: logger)
        let access = try SessionAccessMode.from(configuration.auth)
        service = ReactorService(
            catalog: catalog, configuration: configuration, adminToken: adminToken, access: access, clock: clock,
            logger: logger.labeled("service"), storage: storage, peers: (storage as? NATSStorage).map(NATSCluster.init))
        var http = Self.httpConfiguration(configuration)
        if let storage {
            // Whatever a response or event is about to show is stored first (the file journal:
            // everything buffered is written with one write(2) when output asks, a group commit).
            http.outputBarrier = StorageOutputBarrier(storage, metrics: service.context.metrics)
        }
        // One clock for both: an injected clock then rules HTTP timeouts and keep-alive comments too.
        self.http = HTTPServer(configuration: http, responder: service, clock: clock, logger: logger.labeled("http"))
    }

    /// Binds and starts serving; returns the bound address (port 0 picks a free port).
    @discardableResult
    public func start() throws(IOError) -> SocketAddress {
        let address = try http.start()
        // Reads stored sessions back: never where requests wait.
        if storage != nil, configuration.storage.checkAtStart > 0 {
            let service = self.service
            let thread = Thread { service.checkStoredSessions() }
            thread.name = "reactor.storage.check"
            thread.start()
        }
        return address
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
            lines.append(
                "admin token: \(adminToken) (generated: it changes at every start unless REACTOR_ADMIN_TOKEN, "
                    + "admin.token or admin.tokenFile sets one)"
            )
        } else {
            lines.append("admin token: as configured (\(Self.adminTokenSource(configuration.admin)))")
        }
        if adminTokenIsShort {
            let source = Self.adminTokenSource(configuration.admin)
            lines.append(
                "WARNING: the admin token (\(source)) is \(adminToken.utf8.count) bytes, fewer than "
                    + "\(Self.minimumAdminTokenBytes): allowed on loopback only, anywhere else the server refuses to "
                    + "start. Use a random one, e.g. REACTOR_ADMIN_TOKEN=$(openssl rand -base64 24)")
        }
        switch service.access.kind {
        case .open where !Self.isLoopback(configuration.http.host):
            lines.append(
                "WARNING: sessions are open (auth.sessions=open) on \(configuration.http.host), beyond loopback: "
                    + "anyone who can reach this port and knows or guesses a session id "
                    + "can read, change and delete it. "
                    + "Set auth.sessions=token or jwt (README: Access to sessions)"
            )
        case .open:
            lines.append(
                "sessions: open (anyone who knows a session id may use it; "
                    + "fine on loopback, see auth.sessions before exposing it)"
            )
        case .token:
            lines.append("sessions: token (each session needs the token POST /sessions returned)")
        case .jwt:
            lines.append("sessions: jwt (requests need an HS256 token from your backend)")
        }
        if let storage {
            let count = storage.count
            let sessions = "\(count) \(count == 1 ? "session" : "sessions")"
            if storage is NATSStorage {
                let servers = configuration.storage.nats.servers.map {
                    (try? NATSServerAddress.list($0).first?.description) ?? "?"
                }.joined(separator: ",")
                lines.append("sessions on NATS JetStream: \(servers) (\(sessions) stored)")
            } else {
                lines.append("data folder: \(configuration.storage.dataDir) (\(sessions) recovered)")
            }
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
        // Once: a second signal must not move the deadline effects are given.
        _ = shutdownBegan.compareExchange(
            expected: 0, desired: max(1, service.context.clock.monotonicNanoseconds()), ordering: .relaxed)
        service.stop()
        http.shutdown()
    }

    /// How long shutdown waits for the effects it cancelled (those still running once the HTTP
    /// server has stopped) to end before it closes storage regardless.
    static let effectStopBound: Duration = .seconds(5)

    /// Blocks until the server has stopped, then ends every session's effects and syncs and closes
    /// the journal.
    public func waitUntilStopped() {
        http.waitUntilStopped()
        stopSessions()
        storage?.close()
    }

    /// Stops every resident session once nothing can reach them: effects still running are
    /// cancelled (their actions read as interrupted after a restart) and their tasks end before the
    /// journal closes, so none outlives the server or writes after it.
    func stopSessions(within bound: Duration = effectStopBound) {
        // What is left of http.shutdownDeadlineSeconds, counted from shutdown().
        var grace = Duration.zero
        let began = shutdownBegan.load(ordering: .relaxed)
        if began > 0 {
            let elapsed = Duration.nanoseconds(Int64(service.context.clock.monotonicNanoseconds() &- began))
            grace = max(.zero, .seconds(configuration.http.shutdownDeadlineSeconds) - elapsed)
        }
        let outcome = service.store.stopAtShutdown(grace: grace, within: bound)
        guard outcome.effectsCutOff > 0 else { return }
        let fields: LogFields = ["effects": .int(outcome.effectsCutOff), "ended": .bool(outcome.effectsEnded)]
        if outcome.effectsEnded {
            logger.notice(
                "effects still running at shutdown were cancelled; their actions show as interrupted after a restart",
                fields)
        } else {
            logger.warning(
                "effects still running at shutdown were cancelled but not all of them ended in time; "
                    + "the process exits around them",
                fields)
        }
    }

    /// Has a crash in a session's reactor code write a crash record to `<storage.dataDir>/crashes` (with
    /// storage), so the session is quarantined at the next start; without a folder it still says which
    /// session crashed on standard error.
    static func installCrashHandler(
        _ configuration: ServerConfiguration, storage: (any StorageBackend)?, logger: Logger
    ) {
        do {
            try CrashFolder.install(dataDirectory: storage == nil ? nil : configuration.storage.dataDir)
            // With several instances, the handler also stores the record where every instance sees it.
            let seconds = configuration.storage.nats.crashRecordSeconds
            if let nats = storage as? NATSStorage, seconds > 0 {
                let target = nats.crashes.target()
                let ready = CrashFolder.publish(
                    to: target.servers, connectLine: target.connectLine, subjectPrefix: target.subjectPrefix,
                    timeout: .milliseconds(Int64(seconds * 1000)))
                if !ready {
                    logger.warning(
                        "a crash will not be stored in JetStream as the process dies (no server resolved, or "
                            + "credentials too long for the handler); its record waits in the crash folder for the "
                            + "next start")
                }
            }
        } catch {
            logger.critical(
                "the crash folder cannot be made; a session whose reactor crashes the server will not be quarantined, "
                    + "and may crash it again after a restart",
                ["error": .string("\(error)")])
            _ = try? CrashFolder.install(dataDirectory: nil)
        }
    }

    /// Opens the configured storage backend, unless memory-only.
    /// `readOnly`: to read what is stored beside a server that may run on it (`verify`).
    static func openStorage(
        _ configuration: ServerConfiguration, logger: Logger, readOnly: Bool = false
    ) throws(ConfigurationError) -> (any StorageBackend)? {
        guard !configuration.storage.memoryOnly else { return nil }
        switch StorageKind(rawValue: configuration.storage.backend) {
        case .file?: return try openFileJournal(configuration, logger: logger, readOnly: readOnly)
        case .nats?: return try openNATSStorage(configuration, logger: logger, readOnly: readOnly)
        case nil:
            throw ConfigurationError(
                "storage.backend: expected file or nats, "
                    + "got \(ConfigurationValue.quoted(configuration.storage.backend))"
            )
        }
    }

    /// Connects to the NATS servers and waits until JetStream is ready (logging while it is not),
    /// with the streams and buckets the sessions need.
    static func openNATSStorage(
        _ configuration: ServerConfiguration, logger: Logger, readOnly: Bool = false
    ) throws(ConfigurationError) -> NATSStorage {
        let settings = configuration.storage.nats
        let servers: [NATSServerAddress]
        do {
            servers = try NATSServerAddress.list(settings.servers.joined(separator: ","))
        } catch {
            throw ConfigurationError("storage.nats.servers: \(error)")
        }
        guard !servers.isEmpty else {
            throw ConfigurationError("storage.nats.servers: name at least one server (nats://host:port)")
        }
        var options = NATSStorage.Options(
            servers: servers,
            instance: settings.instance.isEmpty ? defaultInstanceName(port: configuration.http.port) : settings.instance
        )
        options.user = settings.user.isEmpty ? nil : settings.user
        options.password = settings.password.isEmpty ? nil : settings.password
        options.token = settings.token.isEmpty ? nil : settings.token
        options.replicas = settings.replicas
        options.claimTTL = .milliseconds(Int64(settings.claimTTLSeconds * 1000))
        options.prefix = settings.prefix
        options.requestTimeout = .milliseconds(Int64(settings.timeoutSeconds * 1000))
        options.startTimeout =
            settings.startTimeoutSeconds > 0 ? .milliseconds(Int64(settings.startTimeoutSeconds * 1000)) : nil
        options.trimAfterMessages = settings.trimAfterMessages
        options.actionLogLimits = ActionLogLimits(
            count: configuration.sessions.actionLogLimit, bytes: configuration.sessions.actionLogBytes)
        if readOnly {
            // Never an instance's name: it claims nothing and puts no heartbeat, but its connection is named.
            options.readOnly = true
            options.instance = "verify-\(getpid())"
            options.startTimeout = options.startTimeout ?? .seconds(10)
        }
        if !readOnly, FsyncPolicy(rawValue: configuration.storage.fsync) == .always {
            logger.warning(
                "storage.fsync=always applies to the file backend only: "
                    + "with NATS, JetStream acknowledges a record once a quorum wrote it, "
                    + "and syncs it to disk when nats-server's sync_interval says "
                    + "(set sync_interval: always in each node's jetstream block, nats-server 2.10 or later)",
                ["servers": .string(servers.map(\.description).joined(separator: ","))])
        }
        do {
            return try NATSStorage(options: options, logger: logger)
        } catch {
            throw ConfigurationError("storage.backend=nats: \(error.description)")
        }
    }

    /// `<host name>-<port>`: the same for every start of this instance, so a restart takes its own
    /// sessions back at once; with port 0 (a port picked at start), the process id stands in.
    static func defaultInstanceName(port: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        let name = String(
            host.unicodeScalars.map { $0.isASCII && UInt8($0.value).isNameCharacter ? Character($0) : "-" })
        return "\(name.prefix(40))-\(port == 0 ? "pid\(getpid())" : String(port))"
    }

    /// Opens the data directory and recovers the journal's index.
    static func openFileJournal(
        _ configuration: ServerConfiguration, logger: Logger, readOnly: Bool = false
    ) throws(ConfigurationError) -> FileJournal {
        let settings = configuration.storage
        var options = FileJournal.Options(directory: settings.dataDir)
        options.fsync = FsyncPolicy(rawValue: settings.fsync) ?? .batch
        options.fsyncWindowMilliseconds = settings.fsyncWindowMilliseconds
        options.segmentBytes = settings.segmentBytes
        options.actionLogLimit = configuration.sessions.actionLogLimit
        options.actionLogBytes = configuration.sessions.actionLogBytes
        options.history = HistoryLimits(versions: UInt64(settings.historyVersions), bytes: settings.historyBytes)
        options.readOnly = readOnly
        do {
            return try FileJournal(options: options, logger: logger)
        } catch {
            throw ConfigurationError(
                "storage.dataDir: cannot open the journal in \(settings.dataDir): \(error.description) "
                    + "(or run with --memory-only)"
            )
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
            let token =
                String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map {
                    String($0).trimmed
                } ?? ""
            guard !token.isEmpty else {
                throw ConfigurationError("admin.tokenFile: \(admin.tokenFile) holds no token on its first line")
            }
            return (token, false)
        }
        return (AdminAuthenticator.generateToken(), true)
    }

    /// Fewest bytes a configured admin token may have when the server listens beyond loopback: 128 bits
    /// of a random token (a generated one has 256).
    static let minimumAdminTokenBytes = 16

    /// Refuses a configured admin token shorter than ``minimumAdminTokenBytes`` when `http.host` is not a
    /// loopback address (anyone who reaches the port could guess it); returns whether it is that short
    /// on loopback (warned about at start). The message names where the token came from, never the token.
    static func checkAdminTokenLength(
        _ token: String, _ configuration: ServerConfiguration
    ) throws(ConfigurationError) -> Bool {
        let bytes = token.utf8.count
        guard bytes < minimumAdminTokenBytes else { return false }
        let host = configuration.http.host
        guard isLoopback(host) else {
            throw ConfigurationError(
                "\(adminTokenSource(configuration.admin)): the admin token is \(bytes) bytes; listening on \(host), "
                    + "beyond loopback, it needs at least \(minimumAdminTokenBytes) (e.g. `openssl rand -base64 24`), "
                    + "or leave it unset to have one generated")
        }
        return true
    }

    /// Where a configured admin token comes from, for messages.
    static func adminTokenSource(_ admin: ServerConfiguration.Admin) -> String {
        guard admin.token.isEmpty, !admin.tokenFile.isEmpty else { return "REACTOR_ADMIN_TOKEN or admin.token" }
        return "admin.tokenFile \(admin.tokenFile)"
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
        result.connectionLimitExemptions = (limits.exemptAddresses + limits.trustedProxies).compactMap(
            IPAddressRange.init)
        result.eventStreamKeepAliveInterval = .seconds(configuration.sse.keepAliveSeconds)
        result.eventStreamBufferLimit = configuration.sse.subscriberBufferBytes
        return result
    }
}
