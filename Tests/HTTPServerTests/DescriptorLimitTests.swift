import Foundation
import HTTPServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The server at the process's open-file limit, in a child process whose limit is lowered.
@Suite(.serialized) struct DescriptorLimitTests {
    /// `http-bench-server` with at most `descriptors` open files: its address, its log so far, its log and exit.
    static func launch(descriptors: Int, _ flags: [String]) async throws -> (process: Process, address: SocketAddress, listening: String, log: Recorder<String>, exit: Recorder<Int32>) {
        let binary = try #require(ExternalClientTests.benchServer, "build it first: swift build --build-tests builds http-bench-server too")
        let (process, log, exit) = try ExternalClientTests.launch("/bin/sh", ["-c", "ulimit -n \(descriptors) && exec \"$0\" --port 0 --loops 1 \"$@\"", binary] + flags)
        let listening = try await log.next { $0.contains("\"listening\"") }
        let port = try #require(ExternalClientTests.listeningPort(in: listening))
        return (process, SocketAddress(host: "127.0.0.1", port: port), listening, log, exit)
    }

    @Test func keepsServingAtTheLimitShedsNewConnectionsAndRecovers() async throws {
        // A connection limit above the descriptor limit: accept itself runs out of descriptors.
        let (process, address, _, log, finished) = try await Self.launch(descriptors: 64, ["--max-connections", "100000"])
        defer { if process.isRunning { process.terminate() } }
        let keeper = try TestClient(address)
        #expect(try keeper.outcome(of: "/healthz") == .answered(200))

        var served: [TestClient] = []
        var shed = 0
        for _ in 0..<80 {
            let client = try TestClient(address)
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
        _ = try await log.next { $0.contains("out of descriptors") }
        // What it has, it still serves: health on a connection it already holds.
        #expect(try keeper.outcome(of: "/healthz") == .answered(200))
        #expect(try served[0].outcome(of: "/fixed") == .answered(200))

        served.removeAll()
        #expect(try ConnectionLimitTests.servedAgain(address, path: "/fixed", attempts: 50), "descriptors were freed, but new connections are still shed")
        _ = try await log.next { $0.contains("accepting connections again") }
        #expect(process.isRunning)
        kill(process.processIdentifier, SIGTERM)
        #expect(try await finished.next(timeout: .seconds(20)) == 0)
    }

    @Test func theDefaultLimitAnswersWith503BelowTheDescriptorLimit() async throws {
        // 128 descriptors: the derived limit (112) keeps a reserve, so the 503 comes before accept fails.
        let (process, address, listening, log, finished) = try await Self.launch(descriptors: 128, [])
        defer { if process.isRunning { process.terminate() } }
        #expect(listening.contains("\"max_connections\":112"))
        var served: [TestClient] = []
        var refused = 0
        for _ in 0..<120 {
            let client = try TestClient(address)
            switch try client.outcome(of: "/fixed") {
            case .answered(200): served.append(client)
            case .answered(503): refused += 1
            case let other: Issue.record("unexpected outcome \(other)")
            }
        }
        #expect(served.count == 112)
        #expect(refused == 8)
        kill(process.processIdentifier, SIGTERM)
        let last = try await log.next { $0.contains("shutting down") }
        #expect(!last.contains("out of descriptors"))
        #expect(try await finished.next(timeout: .seconds(20)) == 0)
    }
}
