import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// A configured admin token shorter than 16 bytes (`REACTOR_ADMIN_TOKEN=a`) is refused when the server
/// listens beyond loopback and a warning on loopback (issue 22); checked through the real binary.
@Suite(.offThePool) struct AdminTokenStrengthTests {
    /// The environment of a child server: this process's without `REACTOR_*`, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }.merging(extra) { _, new in new }
    }

    @Test(arguments: ["0.0.0.0", "::", "192.0.2.1"])
    func aShortTokenBeyondLoopbackIsRefusedInOneLine(host: String) async throws {
        let token = "fifteen-bytes!!"
        #expect(token.utf8.count == 15)
        let result = try await TestProcess.run(
            try TestProcess.builtExecutable(), ["--memory-only", "--host", host, "--port", "0"],
            environment: Self.environment(["REACTOR_ADMIN_TOKEN": token]))
        #expect(result.termination == .exited(2))
        let lines = result.error.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.error)")
        let expected =
            "reactor-server: invalid configuration: REACTOR_ADMIN_TOKEN or admin.token: the admin token is "
            + "15 bytes; listening on \(host), beyond loopback, it needs at least 16"
        #expect(result.error.hasPrefix(expected), "\(result.error)")
        #expect(!result.error.contains(token), "the token itself is never printed")
    }

    @Test func aShortTokenFromItsFileIsRefusedNamingTheFile() async throws {
        try await withTemporaryDirectory("admin-token") { directory in
            let file = directory + "/admin-token"
            try Data("tiny\n".utf8).write(to: URL(fileURLWithPath: file))
            let result = try await TestProcess.run(
                try TestProcess.builtExecutable(), ["--memory-only", "--host", "0.0.0.0", "--port", "0"],
                environment: Self.environment(["REACTOR_ADMIN_TOKEN_FILE": file]))
            #expect(result.termination == .exited(2))
            #expect(result.error.contains("admin.tokenFile \(file): the admin token is 4 bytes"), "\(result.error)")
            #expect(!result.error.contains("tiny"))
        }
    }

    @Test func aShortTokenOnLoopbackStartsWithAWarning() async throws {
        let server = try await ServerProcess.start(
            arguments: ["--memory-only"], environment: ["REACTOR_ADMIN_TOKEN": "let-me-in"])
        let warning =
            "reactor-server: WARNING: the admin token (REACTOR_ADMIN_TOKEN or admin.token) is 9 bytes, "
            + "fewer than 16"
        #expect(server.standardError.contains(warning), "\(server.standardError)")
        #expect(server.standardError.contains(#""level":"warning""#), "also a log record, for collectors")
        #expect(!server.standardError.contains("let-me-in"), "the token itself is never printed")
        let client = try server.client()
        let admin = [("Authorization", "Bearer let-me-in")]
        #expect(try client.request("GET", "/admin/sessions", headers: admin).status == 200)
        #expect(try await server.stop() == .exited(0))
    }

    @Test func sixteenBytesServeBeyondLoopbackWithoutAWarning() async throws {
        let token = "sixteen-bytes-ok"
        #expect(token.utf8.count == 16)
        let server = try await ServerProcess.start(
            arguments: ["--memory-only", "--host", "0.0.0.0", "--set", "auth.sessions=token"],
            environment: ["REACTOR_ADMIN_TOKEN": token])
        #expect(!server.standardError.contains("WARNING"), "\(server.standardError)")
        let admin = [("Authorization", "Bearer \(token)")]
        #expect(try server.client().request("GET", "/admin/sessions", headers: admin).status == 200)
        #expect(try await server.stop() == .exited(0))
    }

    @Test func aGeneratedTokenCarries256RandomBits() {
        let tokens = (0..<100).map { _ in AdminAuthenticator.generateToken() }
        #expect(Set(tokens).count == tokens.count)
        for token in tokens {
            // Two base64url ids of 128 bits each (22 characters, 6 bits each but the last, which carries 2).
            #expect(token.utf8.count == 44)
            #expect(token.utf8.count >= ReactorServer.minimumAdminTokenBytes)
            #expect(token.utf8.allSatisfy(SessionID.isIDByte))
        }
    }
}
