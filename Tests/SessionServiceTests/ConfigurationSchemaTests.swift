import Testing

@testable import SessionService

@Suite struct ConfigurationSchemaTests {
    @Test func environmentNamesFollowTheKeys() {
        #expect(ConfigurationSchema.setting("http.maxBodyBytes")?.environmentName == "REACTOR_HTTP_MAX_BODY_BYTES")
        #expect(ConfigurationSchema.setting("admin.token")?.environmentName == "REACTOR_ADMIN_TOKEN")
        #expect(ConfigurationSchema.setting("sessions.idleTTLSeconds")?.environmentName == "REACTOR_SESSIONS_IDLE_TTL_SECONDS")
        #expect(ConfigurationSchema.setting("search.baseURL")?.environmentName == "REACTOR_SEARCH_BASE_URL")
    }

    @Test func keysAreUniqueAndEveryDefaultPassesItsOwnCheck() throws {
        let keys = ConfigurationSchema.settings.map(\.key)
        #expect(Set(keys).count == keys.count)
        var configuration = ServerConfiguration()
        for setting in ConfigurationSchema.settings {
            try setting.apply(setting.value(in: ServerConfiguration()), to: &configuration)
        }
        #expect(configuration == ServerConfiguration())
    }

    @Test func rangeAndTypeErrorsNameTheKeyAndTheProblem() throws {
        var configuration = ServerConfiguration()
        let port = try #require(ConfigurationSchema.setting("http.port"))
        #expect(throws: ConfigurationError("http.port: expected an integer from 0 to 65535, got 70000")) {
            try port.apply(.integer(70000), to: &configuration)
        }
        #expect(throws: ConfigurationError("http.port: expected an integer from 0 to 65535, got \"80\"")) {
            try port.apply(.string("80"), to: &configuration)
        }
        #expect(throws: ConfigurationError("http.port (from REACTOR_HTTP_PORT): expected an integer from 0 to 65535, got \"eighty\"")) {
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
        let setting = try #require(ConfigurationSchema.setting(key))
        var configuration = ServerConfiguration()
        let accepted = (try? setting.apply(text: text, from: "test", to: &configuration)) != nil
        #expect(accepted == valid)
    }

    @Test func suggestsTheClosestKey() {
        #expect(ConfigurationSchema.suggestion(for: "http.prot") == "http.port")
        #expect(ConfigurationSchema.suggestion(for: "sessions.limt") == "sessions.limit")
        #expect(ConfigurationSchema.suggestion(for: "completely.unrelated.thing") == nil)
    }
}
