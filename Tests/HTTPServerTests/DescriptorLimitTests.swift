import Foundation
import HTTPServer
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The server at the process's open-file limit, in a child process whose limit is lowered.
@Suite(.offThePool, .serialized) struct DescriptorLimitTests {
    @Test func keepsServingAtTheLimitShedsNewConnectionsAndRecovers() async throws {
        // A connection limit above the descriptor limit: accept itself runs out of descriptors.
        let server = try await ServerProcess.start(
            "http-bench-server", arguments: ["--loops", "1", "--max-connections", "100000"], shell: "ulimit -n 64")
        let address = SocketAddress(host: "127.0.0.1", port: server.port)
        let keeper = try server.client()
        #expect(try keeper.outcome(of: "/healthz") == .answered(200))

        var served: [TestClient] = []
        var shed = 0
        for _ in 0..<80 {
            let client = try server.client()
            switch try client.outcome(of: "/fixed") {
            case .answered(let status):
                #expect(status == 200)
                served.append(client)
            case .closedUnanswered:
                shed += 1
            }
        }
        #expect(shed > 0, "the limit of 64 descriptors was never reached")
        #expect(served.count >= 40 && served.count < 64)
        try await server.process.errorLines.next("the server to say it sheds connections") {
            $0.contains("out of descriptors")
        }
        // What it has, it still serves: health on a connection it already holds.
        #expect(try keeper.outcome(of: "/healthz") == .answered(200))
        #expect(try served[0].outcome(of: "/fixed") == .answered(200))

        served.removeAll()
        #expect(
            try ConnectionLimitTests.servedAgain(address, path: "/fixed", attempts: 50),
            "descriptors were freed, but new connections are still shed")
        try await server.process.errorLines.next("the server to accept again") {
            $0.contains("accepting connections again")
        }
        #expect(server.process.isRunning)
        #expect(try await server.stop(signal: SIGTERM) == .exited(0))
    }

    @Test func theDefaultLimitAnswersWith503BelowTheDescriptorLimit() async throws {
        // 128 descriptors: the derived limit (112) keeps a reserve, so the 503 comes before accept fails.
        let server = try await ServerProcess.start(
            "http-bench-server", arguments: ["--loops", "1"], shell: "ulimit -n 128")
        #expect(server.standardError.contains("\"max_connections\":112"))
        var served: [TestClient] = []
        var refused = 0
        for _ in 0..<120 {
            let client = try server.client()
            switch try client.outcome(of: "/fixed") {
            case .answered(200): served.append(client)
            case .answered(503): refused += 1
            case let other: Issue.record("unexpected outcome \(other)")
            }
        }
        #expect(served.count == 112)
        #expect(refused == 8)
        #expect(try await server.stop(signal: SIGTERM) == .exited(0))
        #expect(!server.standardError.contains("out of descriptors"))
    }
}
