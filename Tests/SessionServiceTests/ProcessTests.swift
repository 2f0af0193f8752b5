import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `reactor-server` executable itself: help, configuration errors, the admin token, signals.
@Suite struct ProcessTests {
    @Test func helpListsTheFlagsAndExitsZero() throws {
        let result = try run(try ServerProcess.binary(), ["--help"])
        #expect(result.status == 0)
        for flag in ["--port", "--host", "--config", "--data-dir", "--memory-only", "--print-config"] {
            #expect(result.output.contains(flag))
        }
    }

    @Test(arguments: [
        (["--port", "99999"], [String: String](), "http.port (from --port): expected an integer from 0 to 65535, got 99999"),
        (["--bogus"], [:], "unknown flag \"--bogus\""),
        ([], ["REACTOR_SESSIONS_LIMIT": "many"], "sessions.limit (from REACTOR_SESSIONS_LIMIT)"),
        (["--config", "/nonexistent/server.json"], [:], "--config: cannot read /nonexistent/server.json"),
    ])
    func invalidConfigurationExitsTwoNamingTheKey(arguments: [String], environment: [String: String], message: String) throws {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        env.merge(environment) { _, new in new }
        let result = try run(try ServerProcess.binary(), arguments, environment: env)
        #expect(result.status == 2)
        #expect(result.error.contains("invalid configuration: \(message)"), "\(result.error)")
    }

    @Test func generatedAdminTokenIsPrintedOnceAndWorks() throws {
        let server = try ServerProcess(arguments: ["--memory-only"])
        let lines = server.standardError.split(separator: "\n")
        #expect(lines.contains("reactor-server: listening on http://127.0.0.1:\(server.port)/"), "\(server.standardError)")
        #expect(lines.contains { $0.hasPrefix("reactor-server: sessions are kept in memory only") })
        let line = try #require(lines.first { $0.hasPrefix("reactor-server: admin token: ") && $0.contains("(generated: it changes at every start") })
        let token = try #require(line.split(separator: " ").dropFirst(3).first.map(String.init))
        #expect(token.count >= 43, "256 random bits")
        let client = try TestConnection(port: server.port)
        #expect(try client.request("GET", "/admin/sessions", headers: [("Authorization", "Bearer \(token)")]).status == 200)
        #expect(try client.request("GET", "/admin/sessions").status == 401)
        #expect(server.standardError.components(separatedBy: token).count == 2, "printed exactly once")
        #expect(server.stop() == 0)
    }

    @Test func openSessionsBeyondLoopbackAreAWarningAtStart() throws {
        let exposed = try ServerProcess(arguments: ["--memory-only", "--host", "0.0.0.0"])
        #expect(exposed.standardError.contains("reactor-server: listening on http://127.0.0.1:\(exposed.port)/ (and every IPv4 interface)"))
        #expect(exposed.standardError.contains("reactor-server: WARNING: sessions are open (auth.sessions=open) on 0.0.0.0"))
        #expect(exposed.standardError.contains(#""level":"warning""#), "also a log record, for collectors")
        #expect(exposed.stop() == 0)
        let guarded = try ServerProcess(arguments: ["--memory-only", "--host", "0.0.0.0", "--set", "auth.sessions=token"])
        #expect(!guarded.standardError.contains("WARNING"))
        #expect(guarded.standardError.contains("reactor-server: sessions: token"))
        #expect(guarded.stop() == 0)
    }

    @Test func configuredTokenIsNeverPrinted() throws {
        let server = try ServerProcess(arguments: ["--memory-only", "--log-level", "debug"], environment: ["REACTOR_ADMIN_TOKEN": "s3cret-token-value"])
        let client = try TestConnection(port: server.port)
        #expect(try client.request("GET", "/admin/sessions", headers: [("Authorization", "Bearer wrong")]).status == 401)
        #expect(server.stop() == 0)
        #expect(!server.standardError.contains("s3cret-token-value"))
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func signalShutsDownGracefullyEndingStreams(_ signal: Int32) throws {
        let server = try ServerProcess(arguments: ["--memory-only"], environment: ["REACTOR_ADMIN_TOKEN": "t"])
        let client = try TestConnection(port: server.port)
        #expect(try client.request("POST", "/sessions", body: #"{"reactor":"counter","id":"s"}"#).status == 201)
        let stream = try TestConnection(port: server.port)
        try stream.write("GET /sessions/s/events HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try stream.read(until: Array("\r\n\r\n".utf8))
        #expect(try stream.nextEvent().id == "0")
        #expect(server.stop(signal: signal) == 0)
        _ = try stream.readToEnd()
        #expect(server.standardError.contains("\"stopped\""))
    }
}
