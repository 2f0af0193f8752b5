import HostedExamples
import Testing

@testable import SessionService

@Suite struct ConfigurationSchemaTests {
    @Test func environmentNamesFollowTheKeys() {
        let server = ConfigurationSchema.server
        #expect(server.setting("http.maxBodyBytes")?.environmentName == "REACTOR_HTTP_MAX_BODY_BYTES")
        #expect(server.setting("admin.token")?.environmentName == "REACTOR_ADMIN_TOKEN")
        #expect(server.setting("sessions.idleTTLSeconds")?.environmentName == "REACTOR_SESSIONS_IDLE_TTL_SECONDS")
        let examples = ExampleCatalog.configurationSchema
        #expect(examples.setting("search.baseURL")?.environmentName == "REACTOR_SEARCH_BASE_URL")
        #expect(ConfigurationSchema.server.setting("search.baseURL") == nil, "search.* belongs to the search example")
    }

    @Test func keysAreUniqueAndEveryDefaultPassesItsOwnCheck() throws {
        let keys = ExampleCatalog.configurationSchema.settings.map(\.key)
        #expect(Set(keys).count == keys.count)
        var configuration = ServerConfiguration()
        for setting in ExampleCatalog.configurationSchema.settings {
            try setting.apply(setting.value(in: ServerConfiguration()), to: &configuration)
        }
        #expect(configuration == ServerConfiguration())
    }

    @Test func rangeAndTypeErrorsNameTheKeyAndTheProblem() throws {
        var configuration = ServerConfiguration()
        let port = try #require(ConfigurationSchema.server.setting("http.port"))
        #expect(throws: ConfigurationError("http.port: expected an integer from 0 to 65535, got 70000")) {
            try port.apply(.integer(70000), to: &configuration)
        }
        #expect(throws: ConfigurationError("http.port: expected an integer from 0 to 65535, got \"80\"")) {
            try port.apply(.string("80"), to: &configuration)
        }
        #expect(
            throws: ConfigurationError(
                "http.port (from REACTOR_HTTP_PORT): expected an integer from 0 to 65535, got \"eighty\"")
        ) {
            try port.apply(text: "eighty", from: "REACTOR_HTTP_PORT", to: &configuration)
        }
        try port.apply(text: " 9000 ", from: "--port", to: &configuration)
        #expect(configuration.http.port == 9000)
    }

    @Test(arguments: [
        ("http.host", "0.0.0.0", true), ("http.host", "::1", true), ("http.host", "localhost", false),
        ("http.host", "300.1.1.1", false), ("cors.allowedOrigins", "https://app.example:8443", true),
        ("cors.allowedOrigins", "*", true), ("cors.allowedOrigins", "https://app.example/", false),
        ("cors.allowedOrigins", "app.example", false), ("log.level", "debug", true), ("log.level", "loud", false),
        ("search.baseURL", "http://127.0.0.1:9/x", true), ("search.baseURL", "ftp://x", false),
        ("sse.keepAliveSeconds", "0.5", true), ("sse.keepAliveSeconds", "0", false), ("log.accessLog", "yes", true),
        ("log.accessLog", "maybe", false),
    ])
    func textValuesAreChecked(key: String, text: String, valid: Bool) throws {
        let setting = try #require(ExampleCatalog.configurationSchema.setting(key))
        var configuration = ServerConfiguration()
        let accepted = (try? setting.apply(text: text, from: "test", to: &configuration)) != nil
        #expect(accepted == valid)
    }

    /// The examples' own settings (search.*) load like the server's, from a file, the environment and flags,
    /// into their section; a server without them knows no such key.
    @Test func contributedSettingsLoadIntoTheirSection() throws {
        let file = Array(#"{"search": {"timeoutSeconds": 2.5}}"#.utf8)
        let options = try ConfigurationLoader.load(
            arguments: ["--config", "c.json", "--set", "search.maxQueuedRequests=7"],
            environment: ["REACTOR_SEARCH_BASE_URL": "http://127.0.0.1:9"], schema: ExampleCatalog.configurationSchema,
            readFile: { _ in file })
        let search = options.configuration[section: .search]
        #expect(search.baseURL == "http://127.0.0.1:9" && search.timeoutSeconds == 2.5 && search.maxQueuedRequests == 7)
        #expect(search.maxConcurrentRequests == SearchSettings().maxConcurrentRequests)
        #expect(options.sources["search.maxQueuedRequests"] == "--set")
        #expect(options.sources["search.baseURL"] == "REACTOR_SEARCH_BASE_URL")
        let printed = ExampleCatalog.configurationSchema.json(for: options.configuration)
        #expect(printed.contains(#""maxQueuedRequests": 7"#))

        var configuration = options.configuration
        configuration[section: .search] = SearchSettings()
        #expect(configuration == ServerConfiguration(), "a section back at its defaults is no difference")
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(arguments: ["--set", "search.maxQueuedRequests=7"], environment: [:])
        }
    }

    @Test func suggestsTheClosestKey() {
        #expect(ConfigurationSchema.server.suggestion(for: "http.prot") == "http.port")
        #expect(ConfigurationSchema.server.suggestion(for: "sessions.limt") == "sessions.limit")
        #expect(ConfigurationSchema.server.suggestion(for: "completely.unrelated.thing") == nil)
    }
}
