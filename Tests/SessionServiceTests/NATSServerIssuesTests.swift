import Foundation
import Logs
import ReactorServerTesting
import Testing

@testable import SessionService

/// The start-up warning for nats-server releases whose clustered streams can accept two writes expecting the same
/// last subject sequence (nats-server#4320), which the backend's claims and fences rely on.
@Suite(.offThePool, .serialized)
struct NATSServerIssuesTests {
    @Test(arguments: [
        ("2.9.10", true), ("v2.9.10", true), ("2.9.20", true), ("2.2.0", true), ("2.9.21", false),
        ("2.10.0", false), ("2.10.4-beta.1", false), ("2.12.1", false), ("3.0.0", false), ("", false),
        ("unknown", false),
    ])
    func theReleasesBefore2_9_21AreTheAffectedOnes(version: String, affected: Bool) {
        #expect(NATSServerIssues.acceptsConcurrentExpectedSequences(version: version) == affected)
        #expect((NATSServerIssues.concurrentExpectedSequencesWarning(version: version, replicas: 3) != nil) == affected)
        // One server checks the expectation under its stream's lock: nothing to warn of.
        #expect(NATSServerIssues.concurrentExpectedSequencesWarning(version: version, replicas: 1) == nil)
    }

    @Test(.enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
    func theStartWarnsOfAnAffectedNATSServerInAClusterOnly() async throws {
        let version = try await Self.installedVersion()
        let affected = NATSServerIssues.acceptsConcurrentExpectedSequences(version: version)
        let cluster = try await NATSTestCluster.start()
        do {
            try await cluster.waitUntilJetStreamAnswers()
            let clustered = try TestServer(
                storage: StoragePlace(
                    directory: nil,
                    settings: [
                        ("storage.backend", "nats"), ("storage.nats.servers", cluster.urls),
                        ("storage.nats.replicas", "3"), ("storage.nats.startTimeoutSeconds", "60"),
                    ]))
            let warnings = clustered.logs.values.filter { $0.message.contains("nats-server#4320") }
            clustered.stop()
            // Debian's nats-server is 2.9.10: affected. A newer binary (NATS_SERVER_BINARY) must not be warned of.
            #expect(warnings.count == (affected ? 1 : 0), "nats-server \(version): \(warnings.map(\.message))")
            if let warning = warnings.first {
                #expect(warning.level == .warning)
                #expect(warning.message.contains("nats-server \(version) can accept two writes"))
                #expect(warning.message.contains("fixed in 2.9.21"))
                #expect(warning.message.contains("reads each claim back"))
                #expect(warning["replicas"] == .int(3))
            }

            // The same release alone (replicas 1) is not affected: no warning.
            let single = try TestServer(
                storage: StoragePlace(
                    directory: nil,
                    settings: [
                        ("storage.backend", "nats"), ("storage.nats.servers", cluster.nodes[0].url),
                        ("storage.nats.replicas", "1"), ("storage.nats.prefix", "single"),
                        ("storage.nats.startTimeoutSeconds", "60"),
                    ]))
            #expect(!single.logs.values.contains { $0.message.contains("nats-server#4320") })
            single.stop()
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }

    /// The version `nats-server --version` prints (`nats-server: v2.9.10` → `2.9.10`).
    static func installedVersion() async throws -> String {
        let binary = try #require(NATSServerProcess.binary)
        let run = try await TestProcess.run(binary, ["--version"])
        let line = (run.output + run.error).trimmingCharacters(in: .whitespacesAndNewlines)
        return String(try #require(line.split(separator: " ").last).drop { $0 == "v" })
    }
}
