import Logs
import NATS

// `reactor-server verify`: a deploy checked against the stored sessions before users meet it.
extension ReactorServerCommand {
    /// Exit code when a stored session would not load.
    public static let verifyFailedExitCode: Int32 = 1

    /// Opens the configured storage read-only (beside a server that may run on it: the journal is only read,
    /// JetStream read without a claim or heartbeat), checks every stored session with the catalog's reactors and
    /// prints per reactor how many load as stored, after migration, or would not load (with the first reasons).
    /// Returns 0 only if every one loads.
    static func runVerify(_ options: LaunchOptions, catalog makeCatalog: (ServerConfiguration) -> ReactorCatalog)
        -> Int32
    {
        let (status, report) = verify(options, catalog: makeCatalog)
        writeStandardOutput(report)
        return status
    }

    /// `reactor-server verify` with `arguments` (the program's name first, then `verify` and the flags) and
    /// `environment`, as ``run(arguments:environment:settings:catalog:)`` reads them: the exit status and what
    /// it prints on standard output (a configuration error goes to standard error, with status 2).
    public static func verify(
        arguments: [String], environment: [String: String], settings: [ConfigurationSetting] = [],
        catalog makeCatalog: (ServerConfiguration) -> ReactorCatalog
    ) -> (status: Int32, report: String) {
        let options: LaunchOptions
        do {
            options = try ConfigurationLoader.load(
                arguments: Array(arguments.dropFirst()), environment: environment,
                schema: ConfigurationSchema.server.adding(settings))
        } catch {
            writeStandardError("reactor-server: invalid configuration: \(error.message)\n")
            return (configurationExitCode, "")
        }
        return verify(options, catalog: makeCatalog)
    }

    /// Checks the stored sessions of `options`' storage; the exit status and the report.
    static func verify(
        _ options: LaunchOptions, catalog makeCatalog: (ServerConfiguration) -> ReactorCatalog
    ) -> (status: Int32, report: String) {
        let configuration = options.configuration
        let logger = Logger(
            label: "reactor-server verify", level: LogLevel(name: configuration.log.level) ?? .info,
            handler: JSONLineLogHandler.standardError)
        for warning in options.warnings { logger.warning(warning) }
        let storage: (any StorageBackend)?
        do {
            storage = try ReactorServer.openStorage(configuration, logger: logger.labeled("storage"), readOnly: true)
        } catch {
            writeStandardError("reactor-server verify: \(error.message)\n")
            return (configurationExitCode, "")
        }
        guard let storage else { return (0, "nothing is stored (storage.memoryOnly): nothing to verify\n") }
        defer { storage.close() }
        let check = StorageCheck.run(storage: storage, catalog: makeCatalog(configuration), limit: nil)
        let name: String
        switch StorageKind(rawValue: configuration.storage.backend) {
        case .nats?:
            // As parsed: a URL may carry credentials, which are never printed.
            let servers = configuration.storage.nats.servers.map {
                (try? NATSServerAddress.list($0).first?.description) ?? "?"
            }.joined(separator: ",")
            name = "NATS JetStream at \(servers) (prefix \(configuration.storage.nats.prefix))"
        default:
            name = "the journal in \(configuration.storage.dataDir)"
        }
        return (check.failed == 0 ? 0 : verifyFailedExitCode, check.report(storageName: name))
    }
}
