import Foundation
import HTTPServer
import Logs
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The `reactor-server` command line: flags and environment → configuration → a running server until
/// SIGTERM/SIGINT. Your own executable can host your reactors with the same command line (and `settings`
/// of their own, ``ConfigurationSection``):
///
/// ```swift
/// exit(ReactorServerCommand.run(
///     arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment
/// ) { _ in
///     var catalog = ReactorCatalog()
///     catalog.register("counter") { CounterReactor() }
///     return catalog
/// })
/// ```
public enum ReactorServerCommand {
    /// Exit code for invalid configuration.
    public static let configurationExitCode: Int32 = 2

    /// Runs the server until it is signalled; returns the process exit code. `settings` are those the catalog
    /// adds to the server's own (``ConfigurationSchema/adding(_:)``): read, listed and printed with them.
    public static func run(
        arguments: [String], environment: [String: String], settings: [ConfigurationSetting] = [],
        catalog makeCatalog: (ServerConfiguration) -> ReactorCatalog
    ) -> Int32 {
        let schema = ConfigurationSchema.server.adding(settings)
        let options: LaunchOptions
        do {
            options = try ConfigurationLoader.load(
                arguments: Array(arguments.dropFirst()), environment: environment, schema: schema)
        } catch {
            writeStandardError("reactor-server: invalid configuration: \(error.message)\n")
            return configurationExitCode
        }
        switch options.command {
        case .help:
            writeStandardOutput(ConfigurationLoader.helpText(schema))
            return 0
        case .printConfiguration:
            writeStandardOutput(schema.json(for: options.configuration.redacted))
            return 0
        case .verify:
            return runVerify(options, catalog: makeCatalog)
        case .serve:
            break
        }
        let configuration = options.configuration
        return serve(
            catalog: { makeCatalog(configuration) }, configuration: configuration, environment: environment,
            warnings: options.warnings, sources: options.sources)
    }

    /// Serves `catalog` with `configuration` as `reactor-server` does, until SIGTERM or SIGINT: JSON log lines and
    /// the start summary (the URL, the admin token) on standard error, a port in use or a bad configuration one
    /// clear line and a non-zero exit code, a signal a graceful stop. Returns the process exit code. The shortest
    /// way to host your reactors from your own `main.swift`:
    ///
    /// ```swift
    /// var configuration = ServerConfiguration()
    /// configuration.http.port = 8080
    /// exit(ReactorServerCommand.serve(catalog: catalog, configuration: configuration))
    /// ```
    public static func serve(
        catalog: ReactorCatalog, configuration: ServerConfiguration,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Int32 {
        serve(catalog: { catalog }, configuration: configuration, environment: environment, warnings: [], sources: [:])
    }

    /// `makeCatalog` runs once the signals are set up, so any thread it starts leaves them to the signal thread.
    static func serve(
        catalog makeCatalog: () -> ReactorCatalog, configuration: ServerConfiguration, environment: [String: String],
        warnings: [String], sources: [String: String]
    ) -> Int32 {
        let options = (warnings: warnings, sources: sources)
        let logger = Logger(
            label: "reactor-server", level: LogLevel(name: configuration.log.level) ?? .info,
            handler: JSONLineLogHandler.standardError)
        for warning in options.warnings { logger.warning(warning) }

        // Before any thread starts, so that only the signal thread receives SIGTERM/SIGINT, and so that
        // every allocation sees one heap policy (large blocks go back to the kernel when freed).
        ShutdownSignals.block([SIGTERM, SIGINT])
        ProcessHeap.fixMapThreshold(environment: environment)
        // Listening from here on: opening storage may wait a long time (JetStream still electing a
        // leader, with no time limit by default), and a container being stopped meanwhile must stop.
        let serving = Mutex<ReactorServer?>(nil)
        ShutdownSignals.onSignal(logger: logger) {
            guard let server = serving.withLock({ $0 }) else {
                logger.notice("stopped before serving: nothing was accepted yet")
                exit(0)
            }
            // The whole server: health answers 503 from the signal on, so a load balancer stops sending work.
            server.shutdown()
        }
        let server: ReactorServer
        do {
            server = try ReactorServer(catalog: makeCatalog(), configuration: configuration, logger: logger)
        } catch {
            writeStandardError("reactor-server: invalid configuration: \(error.message)\n")
            return configurationExitCode
        }
        HTTPServer.raiseOpenFileLimit()
        let address: SocketAddress
        do {
            address = try server.start()
        } catch {
            // One plain line for the person at the terminal (as for a bad configuration); no backtrace.
            let place = configuration.http.host.contains(":") ? "[\(configuration.http.host)]" : configuration.http.host
            let why =
                error.errno == EADDRINUSE
                ? "the port is in use by another process (choose another with --port or http.port)" : "\(error)"
            writeStandardError("reactor-server: cannot listen on \(place):\(configuration.http.port): \(why)\n")
            return 1
        }
        // Plain lines rather than log records: for the person at the terminal, and so log collectors
        // do not keep a generated admin token.
        let summary = server.startupSummary(address: address)
        writeStandardError(summary.split(separator: "\n").map { "reactor-server: \($0)\n" }.joined())
        for warning in summary.split(separator: "\n") where warning.hasPrefix("WARNING: ") {
            logger.warning(String(warning.dropFirst("WARNING: ".count)))
        }
        logger.info(
            "listening",
            [
                "address": .string("\(address)"),
                "reactors": .string(server.service.catalog.definitions.map(\.name).joined(separator: ",")),
                "configured": .string(
                    options.sources.sorted { $0.key < $1.key }.map { "\($0.key) from \($0.value)" }.joined(
                        separator: "; ")),
            ])
        serving.withLock { $0 = server }
        server.waitUntilStopped()
        server.service.stop()
        logger.info("stopped")
        return 0
    }

    static func writeStandardError(_ text: String) { write(fd: 2, text) }

    static func writeStandardOutput(_ text: String) { write(fd: 1, text) }

    private static func write(fd: Int32, _ text: String) {
        var text = text
        // Nothing to tell anyone when the terminal itself is gone.
        text.withUTF8 { bytes in
            _ = Result { () throws(IOError) in try Posix.writeAll(fd, UnsafeRawBufferPointer(bytes)) }
        }
    }
}

extension ServerConfiguration {
    /// A copy safe to print: the admin token replaced.
    var redacted: ServerConfiguration {
        var copy = self
        if !copy.admin.token.isEmpty { copy.admin.token = "<redacted>" }
        if !copy.auth.jwt.secret.isEmpty { copy.auth.jwt.secret = "<redacted>" }
        return copy
    }
}
