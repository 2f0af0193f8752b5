import Foundation
import HostedExamples
import Testing

@testable import SessionService

@Suite struct ConfigurationLoaderTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func configFileHoldsExactlyTheEmbeddedDefaults() throws {
        let path = Self.packageRoot.appendingPathComponent("Config/server.json").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let schema = ExampleCatalog.configurationSchema
        let regenerate = "regenerate with: swift run reactor-server --print-config > Config/server.json"
        #expect(text == schema.json(for: ServerConfiguration()), "\(regenerate)")
        let options = try ConfigurationLoader.load(arguments: ["--config", path], environment: [:], schema: schema)
        #expect(options.configuration == ServerConfiguration())
    }

    @Test func precedenceIsFlagsThenEnvironmentThenFileThenDefaults() throws {
        let file = Array(#"{"http": {"port": 9001, "host": "0.0.0.0"}, "sessions": {"limit": 5}}"#.utf8)
        let options = try ConfigurationLoader.load(
            arguments: ["--config", "x.json", "--port=9003", "--set", "sse.pulseBuffer=7"],
            environment: ["REACTOR_HTTP_PORT": "9002", "REACTOR_SESSIONS_LIMIT": "6", "REACTOR_ADMIN_TOKEN": "secret"],
            readFile: { _ in file })
        #expect(options.configuration.http.port == 9003)
        #expect(options.configuration.http.host == "0.0.0.0")
        #expect(options.configuration.sessions.limit == 6)
        #expect(options.configuration.sse.pulseBuffer == 7)
        #expect(options.configuration.admin.token == "secret")
        #expect(options.sources["http.port"] == "--port")
        #expect(options.sources["http.host"] == "config file x.json")
    }

    @Test func configPathFromTheEnvironment() throws {
        var asked: String?
        _ = try ConfigurationLoader.load(
            arguments: [], environment: ["REACTOR_CONFIG": "/etc/r.json"],
            readFile: { path in
                asked = path
                return Array("{}".utf8)
            })
        #expect(asked == "/etc/r.json")
    }

    @Test(arguments: [
        (["--port", "http"], "http.port (from --port): expected an integer from 0 to 65535, got \"http\""),
        (["--port"], "--port: missing value (see --help)"),
        (["--prot", "1"], "unknown flag \"--prot\"; did you mean --port? (see --help)"),
        (["--set", "http.prot=1"], "http.prot (from --set): unknown setting; did you mean http.port?"),
        (["--set", "novalue"], "--set: expected KEY=VALUE such as http.port=9000, got \"novalue\""),
        (
            ["--log-level", "loud"],
            "log.level (from --log-level): expected one of trace, debug, info, notice, warning, error, critical, "
                + "got \"loud\""
        ),
        (["--print-config=yes"], "--print-config takes no value"),
    ])
    func invalidFlagsNameTheProblem(arguments: [String], message: String) {
        #expect(throws: ConfigurationError(message)) {
            try ConfigurationLoader.load(arguments: arguments, environment: [:])
        }
    }

    @Test func invalidFilesNameTheFileAndKey() {
        func load(_ text: String) throws {
            _ = try ConfigurationLoader.load(
                arguments: ["--config", "c.json"], environment: [:], readFile: { _ in Array(text.utf8) })
        }
        #expect(throws: ConfigurationError("http.port: expected an integer from 0 to 65535, got \"80\"")) {
            try load(#"{"http": {"port": "80"}}"#)
        }
        #expect(
            throws: ConfigurationError("http.prot (from config file c.json): unknown setting; did you mean http.port?")
        ) { try load(#"{"http": {"prot": 80}}"#) }
        #expect(throws: ConfigurationError("c.json: http: expected an object of settings")) {
            try load(#"{"http": 1}"#)
        }
        #expect((try? load(#"{"http": "#)) == nil)
        #expect(throws: ConfigurationError("--config: cannot read missing.json: no such readable file")) {
            try ConfigurationLoader.load(arguments: ["--config", "missing.json"], environment: [:])
        }
    }

    @Test func environmentErrorsAndUnknownVariables() throws {
        #expect(
            throws: ConfigurationError(
                "sessions.limit (from REACTOR_SESSIONS_LIMIT): expected an integer from 1 to 100000000, got \"lots\"")
        ) {
            try ConfigurationLoader.load(arguments: [], environment: ["REACTOR_SESSIONS_LIMIT": "lots"])
        }
        let options = try ConfigurationLoader.load(
            arguments: [], environment: ["REACTOR_HTTP_PROT": "1", "PATH": "/bin"])
        #expect(
            options.warnings == [
                "ignoring unknown environment variable REACTOR_HTTP_PROT (did you mean REACTOR_HTTP_PORT?)"
            ])
    }

    @Test func helpListsEveryFlagAndSetting() throws {
        let help = ConfigurationLoader.helpText(ExampleCatalog.configurationSchema)
        for flag in ["--port", "--host", "--config", "--data-dir", "--log-level", "--set", "--print-config", "--help"] {
            #expect(help.contains(flag))
        }
        for setting in ExampleCatalog.configurationSchema.settings {
            #expect(help.contains(setting.key))
            #expect(help.contains(setting.environmentName))
        }
        #expect(try ConfigurationLoader.load(arguments: ["--port", "x", "--help"], environment: [:]).command == .help)
    }

    @Test func printedConfigurationHidesTheAdminToken() {
        var configuration = ServerConfiguration()
        configuration.admin.token = "s3cret"
        #expect(!ConfigurationSchema.server.json(for: configuration.redacted).contains("s3cret"))
    }
}
