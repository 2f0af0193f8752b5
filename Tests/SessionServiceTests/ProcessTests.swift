import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `reactor-server` executable itself: help, configuration errors, the admin token, signals.
@Suite(.offThePool) struct ProcessTests {
    @Test func helpListsTheFlagsAndExitsZero() async throws {
        let result = try await TestProcess.run(try TestProcess.builtExecutable(), ["--help"])
        #expect(result.termination == .exited(0))
        for flag in ["--port", "--host", "--config", "--data-dir", "--memory-only", "--print-config"] {
            #expect(result.output.contains(flag))
        }
    }

    @Test(arguments: [
        (
            ["--port", "99999"], [String: String](),
            "http.port (from --port): expected an integer from 0 to 65535, got 99999"
        ),
        (["--bogus"], [:], "unknown flag \"--bogus\""),
        ([], ["REACTOR_SESSIONS_LIMIT": "many"], "sessions.limit (from REACTOR_SESSIONS_LIMIT)"),
        (["--config", "/nonexistent/server.json"], [:], "--config: cannot read /nonexistent/server.json"),
    ])
    func invalidConfigurationExitsTwoNamingTheKey(arguments: [String], environment: [String: String], message: String)
        async throws
    {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        env.merge(environment) { _, new in new }
        let result = try await TestProcess.run(try TestProcess.builtExecutable(), arguments, environment: env)
        #expect(result.termination == .exited(2))
        #expect(result.error.contains("invalid configuration: \(message)"), "\(result.error)")
    }

    /// A port another process holds: one plain line saying so, exit 1, no crash and no backtrace.
    @Test func aPortInUseIsOneLineAndExitOne() async throws {
        let first = try await ServerProcess.start(arguments: ["--memory-only"])
        let result = try await TestProcess.run(
            try TestProcess.builtExecutable(), ["--memory-only", "--port", "\(first.port)"])
        #expect(result.termination == .exited(1))
        let expected = "reactor-server: cannot listen on 127.0.0.1:\(first.port): the port is in use by another process"
        let lines = result.error.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("reactor-server: cannot listen") }.count == 1, "\(result.error)")
        #expect(lines.contains { $0.hasPrefix(expected) }, "\(result.error)")
        #expect(!result.error.contains("Fatal error") && !result.error.contains("Backtrace"), "\(result.error)")
        #expect(try await first.stop() == .exited(0))
    }

    @Test func generatedAdminTokenIsPrintedOnceAndWorks() async throws {
        let server = try await ServerProcess.start(arguments: ["--memory-only"])
        let lines = server.standardError.split(separator: "\n")
        #expect(
            lines.contains("reactor-server: listening on http://127.0.0.1:\(server.port)/"), "\(server.standardError)")
        #expect(lines.contains { $0.hasPrefix("reactor-server: sessions are kept in memory only") })
        let line = try #require(
            lines.first {
                $0.hasPrefix("reactor-server: admin token: ") && $0.contains("(generated: it changes at every start")
            })
        let token = try #require(line.split(separator: " ").dropFirst(3).first.map(String.init))
        #expect(token.count >= 43, "256 random bits")
        let client = try TestClient(port: server.port)
        #expect(
            try client.request("GET", "/admin/sessions", headers: [("Authorization", "Bearer \(token)")]).status == 200)
        #expect(try client.request("GET", "/admin/sessions").status == 401)
        #expect(server.standardError.components(separatedBy: token).count == 2, "printed exactly once")
        #expect(try await server.stop() == .exited(0))
    }

    @Test func openSessionsBeyondLoopbackAreAWarningAtStart() async throws {
        let exposed = try await ServerProcess.start(arguments: ["--memory-only", "--host", "0.0.0.0"])
        #expect(
            exposed.standardError.contains(
                "reactor-server: listening on http://127.0.0.1:\(exposed.port)/ (and every IPv4 interface)"))
        #expect(
            exposed.standardError.contains("reactor-server: WARNING: sessions are open (auth.sessions=open) on 0.0.0.0")
        )
        #expect(exposed.standardError.contains(#""level":"warning""#), "also a log record, for collectors")
        #expect(try await exposed.stop() == .exited(0))
        let guarded = try await ServerProcess.start(arguments: [
            "--memory-only", "--host", "0.0.0.0", "--set", "auth.sessions=token",
        ])
        #expect(!guarded.standardError.contains("WARNING"))
        #expect(guarded.standardError.contains("reactor-server: sessions: token"))
        #expect(try await guarded.stop() == .exited(0))
    }

    @Test func configuredTokenIsNeverPrinted() async throws {
        let server = try await ServerProcess.start(
            arguments: ["--memory-only", "--log-level", "debug"],
            environment: ["REACTOR_ADMIN_TOKEN": "s3cret-token-value"])
        let client = try TestClient(port: server.port)
        #expect(
            try client.request("GET", "/admin/sessions", headers: [("Authorization", "Bearer wrong")]).status == 401)
        #expect(try await server.stop() == .exited(0))
        #expect(!server.standardError.contains("s3cret-token-value"))
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func signalShutsDownGracefullyEndingStreams(_ signal: Int32) async throws {
        let server = try await ServerProcess.start(
            arguments: ["--memory-only"], environment: ["REACTOR_ADMIN_TOKEN": "t"])
        let client = try TestClient(port: server.port)
        #expect(try client.request("POST", "/sessions", body: #"{"reactor":"counter","id":"s"}"#).status == 201)
        let stream = try server.client()
        try stream.openEventStream("/sessions/s/events")
        #expect(try stream.nextEvent().id == "0")
        #expect(try await server.stop(signal: signal) == .exited(0))
        try stream.readToEnd()
        #expect(server.standardError.contains("\"stopped\""))
    }
}
