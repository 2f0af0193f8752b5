import JSONCodec

/// What the command line asked for: a configuration to serve with, or a document to print.
public struct LaunchOptions: Sendable, Equatable {
    /// What to do after loading.
    public enum Command: Sendable, Equatable {
        case serve
        /// `--help`: print `ConfigurationLoader/helpText` and exit 0.
        case help
        /// `--print-config`: print the effective configuration as JSON and exit 0.
        case printConfiguration
        /// `verify` (the first argument): check that every stored session loads with the hosted reactors,
        /// without serving; exit 0 only if every one does.
        case verify
    }

    public var command: Command = .serve
    public var configuration = ServerConfiguration()
    /// Where each setting that differs from the embedded default came from, for the start-up log line.
    public var sources: [String: String] = [:]
    /// Problems worth a warning that do not stop the server (an unknown `REACTOR_*` variable).
    public var warnings: [String] = []
}

/// Builds the configuration from, in increasing precedence: the embedded defaults, the config file
/// (`--config PATH` or `REACTOR_CONFIG`), `REACTOR_*` environment variables, and command-line flags.
///
/// ```swift
/// let options = try ConfigurationLoader.load(arguments: Array(CommandLine.arguments.dropFirst()),
///                                            environment: ProcessInfo.processInfo.environment)
/// ```
public enum ConfigurationLoader {
    /// Flags with a dedicated spelling, mapped to the setting they set.
    static let flagSettings: [(flag: String, key: String)] = [
        ("--port", "http.port"), ("--host", "http.host"), ("--data-dir", "storage.dataDir"),
        ("--log-level", "log.level"), ("--loops", "http.loops"),
    ]
    static let otherFlags = ["--config", "--set", "--print-config", "--help", "-h", "--memory-only"]
    /// Environment variables the server reads that are not settings.
    static let otherEnvironment: Set<String> = ["REACTOR_CONFIG"]

    /// Loads the configuration of the settings `schema` lists; any problem is a ``ConfigurationError`` naming
    /// the key or flag (exit code 2).
    public static func load(
        arguments: [String], environment: [String: String], schema: ConfigurationSchema = .server,
        readFile: (String) throws -> [UInt8] = ConfigurationFile.read
    ) throws(ConfigurationError) -> LaunchOptions {
        var options = LaunchOptions()
        var arguments = arguments
        if arguments.first == "verify" {
            options.command = .verify
            arguments.removeFirst()
        }
        let flags = try parseFlags(arguments)
        if flags.contains(where: { $0.flag == "--help" || $0.flag == "-h" }) {
            options.command = .help
            return options
        }
        if flags.contains(where: { $0.flag == "--print-config" }) { options.command = .printConfiguration }

        let configPath = flags.last(where: { $0.flag == "--config" })?.value ?? environment["REACTOR_CONFIG"]
        if let configPath {
            let source = "config file \(configPath)"
            let bytes: [UInt8]
            do {
                bytes = try readFile(configPath)
            } catch {
                throw ConfigurationError("--config: cannot read \(configPath): \(error)")
            }
            for (key, value) in try ConfigurationFile.values(from: bytes, path: configPath) {
                try setting(key, in: schema, source: source).apply(value, to: &options.configuration)
                options.sources[key] = source
            }
        }

        for setting in schema.settings {
            guard let text = environment[setting.environmentName] else { continue }
            try setting.apply(text: text, from: setting.environmentName, to: &options.configuration)
            options.sources[setting.key] = setting.environmentName
        }
        let known = Set(schema.settings.map(\.environmentName)).union(otherEnvironment)
        for name in environment.keys.sorted() where name.hasPrefix("REACTOR_") && !known.contains(name) {
            let candidates = known.sorted().map { ($0, ConfigurationSchema.editDistance($0, name)) }
            let hint = candidates.min { $0.1 < $1.1 }.flatMap { $0.1 <= 3 ? " (did you mean \($0.0)?)" : nil } ?? ""
            options.warnings.append("ignoring unknown environment variable \(name)\(hint)")
        }

        for (flag, value) in flags {
            if flag == "--memory-only" {
                options.configuration.storage.memoryOnly = true
                options.sources["storage.memoryOnly"] = flag
            } else if let key = flagSettings.first(where: { $0.flag == flag })?.key, let value {
                try setting(key, in: schema, source: flag).apply(text: value, from: flag, to: &options.configuration)
                options.sources[key] = flag
            } else if flag == "--set", let value {
                guard let equals = value.firstIndex(of: "=") else {
                    throw ConfigurationError(
                        "--set: expected KEY=VALUE such as http.port=9000, got \(ConfigurationValue.quoted(value))")
                }
                let key = String(value[..<equals])
                let text = String(value[value.index(after: equals)...])
                let setting = try setting(key, in: schema, source: "--set")
                try setting.apply(text: text, from: "--set", to: &options.configuration)
                options.sources[key] = "--set"
            }
        }
        return options
    }

    static func setting(
        _ key: String, in schema: ConfigurationSchema, source: String
    ) throws(ConfigurationError) -> ConfigurationSetting {
        if let setting = schema.setting(key) { return setting }
        let hint = schema.suggestion(for: key).map { "; did you mean \($0)?" } ?? ""
        throw ConfigurationError("\(key) (from \(source)): unknown setting\(hint)")
    }

    /// Splits `--flag value` and `--flag=value`; rejects unknown flags and missing values.
    static func parseFlags(_ arguments: [String]) throws(ConfigurationError) -> [(flag: String, value: String?)] {
        let valued = Set(flagSettings.map(\.flag) + ["--config", "--set"])
        let known = valued.union(otherFlags)
        var result: [(String, String?)] = []
        var index = 0
        while index < arguments.count {
            var flag = arguments[index]
            var value: String?
            if flag.hasPrefix("--"), let equals = flag.firstIndex(of: "=") {
                value = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            guard known.contains(flag) else {
                let guess = known.map { ($0, ConfigurationSchema.editDistance($0, flag)) }.min { $0.1 < $1.1 }
                let hint = guess.flatMap { $0.1 <= 2 ? "; did you mean \($0.0)?" : nil } ?? ""
                throw ConfigurationError("unknown flag \(ConfigurationValue.quoted(flag))\(hint) (see --help)")
            }
            if valued.contains(flag), value == nil {
                index += 1
                guard index < arguments.count else { throw ConfigurationError("\(flag): missing value (see --help)") }
                value = arguments[index]
            } else if !valued.contains(flag), value != nil {
                throw ConfigurationError("\(flag) takes no value")
            }
            result.append((flag, value))
            index += 1
        }
        return result
    }

    /// The `--help` text: every flag, then every setting of `schema` with its environment variable and default.
    public static func helpText(_ schema: ConfigurationSchema = .server) -> String {
        var text = """
            reactor-server: an HTTP/JSON state service hosting one reactor per session.

            Usage: reactor-server [flags]
                   reactor-server verify [flags]   check that every stored session loads with this
                                                   server's reactors (as stored or migrated), without
                                                   serving or disturbing a running server; exit 0 only
                                                   if every one does

            Flags:
              --port N            listen port (http.port; default 8080)
              --host ADDR         listen address (http.host; default 127.0.0.1)
              --config PATH       JSON config file (also REACTOR_CONFIG); see Config/server.json
              --data-dir PATH     where sessions are persisted (storage.dataDir; default ./data)
              --memory-only       keep sessions in memory only; a restart forgets them (storage.memoryOnly)
              --log-level LEVEL   trace, debug, info, notice, warning, error or critical (log.level)
              --loops N           event-loop threads; 0 = one per CPU (http.loops)
              --set KEY=VALUE     set any setting below, e.g. --set sessions.limit=1000
              --print-config      print the effective configuration as JSON and exit
              --help, -h          print this help and exit

            Precedence: flags > environment > config file > embedded defaults.
            The admin token comes from REACTOR_ADMIN_TOKEN (or admin.token / admin.tokenFile); when none is
            set, one is generated at start and printed once to standard error.

            Settings (config key, environment variable, default):

            """
        let defaults = ServerConfiguration()
        for setting in schema.settings {
            text += "  \(setting.key)  \(setting.environmentName)  default \(setting.value(in: defaults).json)\n"
            text += "      \(setting.help) (\(setting.expected))\n"
        }
        return text
    }
}
