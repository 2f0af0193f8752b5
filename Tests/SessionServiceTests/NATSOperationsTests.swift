import Foundation
import ReactorServerTesting
import Testing

/// Running on the NATS backend: `/healthz` answers 503 while JetStream cannot be reached (naming the
/// server) and 200 once it is back, `/metrics` shows the backend, and credentials come from the
/// environment without ever appearing in the log.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct NATSOperationsTests {
    static func settings(_ url: String, _ extra: [(String, String)] = []) -> [(key: String, value: String)] {
        [
            ("storage.backend", "nats"), ("storage.nats.servers", url), ("storage.nats.replicas", "1"),
            ("storage.nats.claimTTLSeconds", "1"), ("storage.nats.timeoutSeconds", "1"),
        ]
            + extra.map { (key: $0.0, value: $0.1) }
    }

    @Test func healthIs503WhileJetStreamIsUnreachableAndTheMetricsShowTheBackend() async throws {
        try await NATSServerProcess.with { nats in
            let server = try TestServer(storage: StoragePlace(directory: nil, settings: Self.settings(nats.url)))
            #expect(try server.request("GET", "/healthz").status == 200)
            try server.createSession("counter", id: "c")
            #expect(
                try server.request("POST", "/sessions/c/actions?wait=true", body: #"{"type":"increase"}"#).status == 200
            )

            try await nats.kill()
            try await eventually("/healthz to answer 503 with JetStream gone", within: .seconds(30)) {
                try server.request("GET", "/healthz").status == 503
            }
            let health = try server.request("GET", "/healthz")
            #expect(
                health.errorMessage?.contains("127.0.0.1:\(nats.port)") == true,
                "the answer does not name the server: \(health.text)")
            #expect(try server.request("POST", "/sessions/c/actions", body: #"{"type":"increase"}"#).status == 503)

            try await nats.restart()
            try await eventually("/healthz to answer 200 with JetStream back", within: .seconds(30)) {
                try server.request("GET", "/healthz").status == 200
            }
            #expect(
                try server.request("POST", "/sessions/c/actions?wait=true", body: #"{"type":"increase"}"#).json()[
                    "version"] as? Int == 2)
            let metrics = try server.request("GET", "/metrics").text
            for family in [
                "reactor_storage_publish_seconds_count", "reactor_storage_takeovers_total",
                "reactor_storage_fencing_rejections_total",
            ] {
                #expect(metrics.contains(family), "/metrics lacks \(family)")
            }
        }
    }

    @Test func noActionIsAcknowledgedWithoutAQuorumOfTheCluster() async throws {
        try await NATSTestCluster.with { cluster in
            let place = StoragePlace(
                directory: nil, settings: Self.settings(cluster.urls, [("storage.nats.replicas", "3")]))
            let server = try TestServer(storage: place)
            try server.createSession("counter", id: "q")
            // A just-started R3 cluster may still be electing the stream's leader: the first publish can time out
            // (503, storage_unavailable) before one answers. What this test is about starts once one is acknowledged.
            try await eventually("a first action to be acknowledged by the new cluster", within: .seconds(30)) {
                try server.request("POST", "/sessions/q/actions?wait=true", body: #"{"type":"increase"}"#).status == 200
            }

            // One node of three left: a record can be published but not acknowledged by a quorum.
            try await cluster.nodes[1].kill()
            try await cluster.nodes[2].kill()
            for path in ["/sessions/q/actions", "/sessions/q/actions?wait=true"] {
                let client = try server.connect(readTimeout: .seconds(3))
                let answer = try? client.request("POST", path, body: #"{"type":"increase"}"#)
                #expect(
                    answer.map { !(200..<300).contains($0.status) } ?? true,
                    "acknowledged without a quorum: \(answer?.text ?? "")")
            }
            try await eventually("/healthz to answer 503 without a quorum", within: .seconds(30)) {
                try server.request("GET", "/healthz").status == 503
            }

            // A second node back: a quorum again, and the session goes on from where it was.
            try await cluster.nodes[1].restart()
            try await eventually("/healthz to answer 200 with a quorum back", within: .seconds(60)) {
                try server.request("GET", "/healthz").status == 200
            }
            let before = try #require(try server.request("GET", "/sessions/q").json()["version"] as? Int)
            #expect(before >= 1)
            try await eventually("an action to be acknowledged with a quorum back", within: .seconds(30)) {
                try server.request("POST", "/sessions/q/actions?wait=true", body: #"{"type":"increase"}"#).status == 200
            }
            #expect(try server.request("GET", "/sessions/q").json()["version"] as? Int ?? 0 > before)
        }
    }

    @Test func credentialsComeFromTheEnvironmentAndNeverReachTheLog() async throws {
        let password = "pw-" + UUID().uuidString
        try await NATSServerProcess.with(extra: ["--user", "reactor", "--pass", password]) { nats in
            let arguments = StoragePlace(
                directory: nil,
                settings: Self.settings(nats.url, [("storage.nats.startTimeoutSeconds", "3"), ("log.level", "debug")])
            ).arguments
            let server = try await ServerProcess.start(
                arguments: arguments,
                environment: ["REACTOR_STORAGE_NATS_USER": "reactor", "REACTOR_STORAGE_NATS_PASSWORD": password])
            #expect(
                try server.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"c"}"#).status == 201
            )
            try await server.stop()
            #expect(!server.standardError.contains(password), "the password is in the log")

            // A wrong password: start-up fails, saying why and where, without the password either.
            let wrong = "wrong-" + UUID().uuidString
            let refused = try TestProcess(
                try TestProcess.builtExecutable("reactor-server"), arguments + ["--port", "0"],
                environment: ["REACTOR_STORAGE_NATS_USER": "reactor", "REACTOR_STORAGE_NATS_PASSWORD": wrong])
            let exit = try await refused.waitForExit(within: .seconds(60))
            #expect(exit != .exited(0))
            #expect(
                refused.standardError.contains("127.0.0.1:\(nats.port)"),
                "the error does not name the server: \(refused.standardError)")
            #expect(
                refused.standardError.lowercased().contains("authorization"),
                "the error does not say the credentials were refused: \(refused.standardError)")
            #expect(!refused.standardError.contains(wrong), "the password is in the log")
        }
    }

    /// The start says which nats-server it reached, and that `storage.fsync=always` does not sync JetStream.
    @Test func theStartNamesTheNATSServerAndWarnsThatFsyncIsTheFileBackendsOnly() async throws {
        try await NATSServerProcess.with { nats in
            let settings = Self.settings(nats.url, [("storage.fsync", "always")])
            let server = try await ServerProcess.start(
                arguments: StoragePlace(directory: nil, settings: settings).arguments)
            #expect(
                try server.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"c"}"#).status == 201
            )
            try await server.stop()
            let log = server.standardError
            #expect(log.contains(#""msg":"NATS connected""#) && log.contains(#""version":""#), "\(log.suffix(3000))")
            #expect(log.contains("storage.fsync=always applies to the file backend only"), "\(log.suffix(3000))")
        }
    }

    @Test func aSignalWhileWaitingForJetStreamStopsTheServer() async throws {
        // Nothing listens there, and there is no start-up time limit: the server waits for ever, logging.
        let unreachable = "nats://127.0.0.1:\(try NATSServerProcess.freePort())"
        let waiting = try TestProcess(
            try TestProcess.builtExecutable("reactor-server"),
            [
                "--port", "0", "--set", "storage.backend=nats", "--set", "storage.nats.servers=\(unreachable)", "--set",
                "storage.nats.timeoutSeconds=1",
            ])
        try await eventually("the server to say it waits for JetStream", within: .seconds(30)) {
            waiting.standardError.contains("waiting for JetStream")
        }
        // A container being stopped (docker stop) while the cluster elects a leader.
        waiting.signal(SIGTERM)
        #expect(try await waiting.waitForExit(within: .seconds(10)) == .exited(0))
        #expect(waiting.standardError.contains("stopped before serving"), "\(waiting.standardError.suffix(2000))")
    }
}
