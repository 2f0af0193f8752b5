import Logs
import NATS
import ReactorServerTesting
import Testing

/// A 3-node JetStream cluster on loopback: R3 streams, leader failover, paused nodes.
@Suite(
    .offThePool, .serialized, .timeLimit(.minutes(5)),
    .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct JetStreamClusterTests {
    /// A cluster, a connection to all its nodes and a JetStream context, ready; torn down after `body`.
    func withCluster(
        _ configure: @escaping (inout NATSOptions) -> Void = { _ in },
        _ body: (NATSTestCluster, JetStream, Recorder<LogRecord>) async throws -> Void
    ) async throws {
        let cluster = try await NATSTestCluster.start()
        let logs = Recorder<LogRecord>()
        let connection: NATSConnection
        do {
            connection = try await connect(cluster.urls) {
                $0.maxReconnectWait = .milliseconds(250)
                $0.logger = Logger(label: "nats", level: .info, handler: logs)
                configure(&$0)
            }
        } catch {
            await cluster.shutdown()
            throw error
        }
        let js = JetStream(connection: connection, timeout: .seconds(10))
        do {
            try await js.waitUntilReady(
                timeout: .seconds(120), logger: Logger(label: "test", level: .info, handler: logs))
            try await body(cluster, js, logs)
        } catch {
            connection.close()
            await cluster.shutdown()
            throw error
        }
        connection.close()
        await cluster.shutdown()
    }

    /// Creates an R3 stream, retrying while the cluster is still forming.
    func createR3Stream(_ js: JetStream, logs: Recorder<LogRecord>) async throws -> StreamInfo {
        var config = StreamConfig(name: "SESSIONS", subjects: ["sessions.>"], replicas: 3)
        config.allowDirect = true
        let logger = Logger(label: "test", level: .info, handler: logs)
        return try await js.retrying("creating the SESSIONS stream", timeout: .seconds(120), logger: logger) {
            () async throws(NATSError) in
            try await js.createOrUpdateStream(config)
        }
    }

    /// Publishes until acknowledged, retrying transient failures with the same message id (so a
    /// publish that was stored but whose acknowledgement was lost is not stored twice).
    func publishSurely(_ js: JetStream, _ subject: String, _ payload: String, id: String, expected: UInt64? = nil)
        async throws -> PubAck
    {
        try await js.retrying("publishing \(id)", timeout: .seconds(120), logger: .disabled) {
            () async throws(NATSError) in
            try await js.publish(
                subject, payload: payload.bytes,
                options: PublishOptions(messageID: id, expectedLastSubjectSequence: expected, timeout: .seconds(2)))
        }
    }

    @Test func createsReplicatedStreamsOnceTheClusterIsReady() async throws {
        try await withCluster { cluster, js, logs in
            let info = try await createR3Stream(js, logs: logs)
            #expect(info.replicas == 3)
            let leader = try #require(try await js.streamInfo("SESSIONS")?.leader)
            #expect(cluster.nodes.map(\.name).contains(leader))
            let kv = try await js.retrying("creating the owners bucket", timeout: .seconds(120), logger: .disabled) {
                () async throws(NATSError) in
                try await js.keyValue(KeyValueConfig(bucket: "owners", replicas: 3))
            }
            #expect(try await js.streamInfo("KV_owners")?.replicas == 3)
            let revision = try await kv.create("s1", value: "n1".bytes)
            #expect(try await kv.get("s1", consistent: true)?.revision == revision)
        }
    }

    /// Instances of a cluster start together and each creates the same streams: a server that learns of a
    /// stream another connection just created may answer "stream not found" (10059) until its copy exists.
    /// Every creator must end with the stream, none with that error (it once stopped a cluster's start).
    @Test func theSameStreamsCreatedAtOnceThroughEveryNodeAllSucceed() async throws {
        try await withCluster { cluster, js, logs in
            _ = try await createR3Stream(js, logs: logs)
            var creators: [JetStream] = []
            var connections: [NATSConnection] = []
            defer { for connection in connections { connection.close() } }
            for node in cluster.nodes {
                for _ in 0..<2 {
                    let connection = try await connect(node.url)
                    connections.append(connection)
                    creators.append(JetStream(connection: connection, timeout: .seconds(10)))
                }
            }
            let logger = Logger(label: "test", level: .info, handler: logs)
            for round in 0..<8 {
                let config = StreamConfig(name: "RACE\(round)", subjects: ["race\(round).>"], replicas: 3)
                let outcomes = await withTaskGroup(of: String?.self) { group in
                    for creator in creators {
                        group.addTask {
                            do {
                                _ = try await creator.retrying(
                                    "creating \(config.name)", timeout: .seconds(60), logger: logger
                                ) {
                                    () async throws(NATSError) in
                                    try await creator.createOrUpdateStream(config)
                                }
                                return nil
                            } catch {
                                return "\(error)"
                            }
                        }
                    }
                    var failures: [String] = []
                    for await failure in group { if let failure { failures.append(failure) } }
                    return failures
                }
                #expect(outcomes.isEmpty, "round \(round): \(outcomes)")
                #expect(try await js.streamInfo(config.name)?.replicas == 3)
            }
        }
    }

    @Test func anR3StreamKeepsEveryAcknowledgedPublishWhenItsLeaderIsKilled() async throws {
        try await withCluster { cluster, js, logs in
            _ = try await createR3Stream(js, logs: logs)
            var acknowledged: [UInt64] = []
            for index in 1...100 {
                acknowledged.append(try await publishSurely(js, "sessions.log", "m\(index)", id: "m\(index)").sequence)
            }

            let leaderName = try #require(try await js.streamInfo("SESSIONS")?.leader)
            let leader = try #require(cluster.nodes.first { $0.name == leaderName })
            try await leader.kill()
            for index in 101...200 {
                acknowledged.append(try await publishSurely(js, "sessions.log", "m\(index)", id: "m\(index)").sequence)
            }
            #expect(
                acknowledged == Array(1...200), "each message acknowledged once, in order, with no gap or duplicate")

            let info = try #require(try await js.streamInfo("SESSIONS"))
            #expect(info.leader != leaderName && info.lastSequence == 200 && info.messages == 200)
            // Right after a failover the new leader may not answer consumer requests yet: retried, as
            // the storage backend will.
            let replayed = try await js.retrying("replaying the log", timeout: .seconds(120), logger: .disabled) {
                () async throws(NATSError) in
                try await js.replay(stream: "SESSIONS", subject: "sessions.log", batch: 64)
            }
            #expect(replayed.map(\.payload) == (1...200).map { "m\($0)".bytes })

            // The killed node comes back and catches up.
            try await leader.restart()
            let revived = try await connect(leader.url)
            defer { revived.close() }
            let local = JetStream(connection: revived, timeout: .seconds(10))
            let caughtUp = try await local.retrying(
                "the restarted node to catch up", timeout: .seconds(120), logger: .disabled
            ) { () async throws(NATSError) in
                guard let info = try await local.streamInfo("SESSIONS"), info.lastSequence == 200 else {
                    throw NATSError.timedOut(subject: "catch-up", server: leader.url, after: .zero)
                }
                return info
            }
            #expect(caughtUp.messages == 200)
        }
    }

    @Test func theExpectedLastSubjectSequenceHoldsAcrossAFailover() async throws {
        try await withCluster { cluster, js, logs in
            _ = try await createR3Stream(js, logs: logs)
            var last = try await publishSurely(js, "sessions.s1", "v1", id: "v1", expected: 0).sequence
            last = try await publishSurely(js, "sessions.s1", "v2", id: "v2", expected: last).sequence
            let leaderName = try #require(try await js.streamInfo("SESSIONS")?.leader)
            try await cluster.nodes.first { $0.name == leaderName }!.kill()

            let stale = last - 1
            do {
                _ = try await publishSurely(js, "sessions.s1", "stale", id: "stale", expected: stale)
                Issue.record("a stale writer appended after the failover")
            } catch let error as NATSError {
                #expect(error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence)
            }
            let next = try await publishSurely(js, "sessions.s1", "v3", id: "v3", expected: last)
            #expect(next.sequence == last + 1)
            #expect(
                try await js.directMessages(stream: "SESSIONS", subject: "sessions.s1").map(\.payload)
                    == ["v1", "v2", "v3"].map(\.bytes))
        }
    }

    @Test func aConnectionToAPausedNodeMovesToAnotherAndKeepsPublishing() async throws {
        try await withCluster({
            $0.pingInterval = .milliseconds(200)
            $0.maxPingsOutstanding = 2
            $0.connectTimeout = .milliseconds(500)
        }) { cluster, js, logs in
            _ = try await createR3Stream(js, logs: logs)
            _ = try await publishSurely(js, "sessions.log", "before", id: "before")
            guard case .connected(let url) = js.connection.status, let node = cluster.node(at: url) else {
                throw TestFailure("not connected: \(js.connection.status)")
            }
            node.pause()
            defer { node.resume() }
            try await logs.waitForMessage(containing: "NATS connection lost", within: .seconds(10))
            let ack = try await publishSurely(js, "sessions.log", "while paused", id: "while paused")
            #expect(ack.sequence == 2)
            guard case .connected(let now) = js.connection.status else { throw TestFailure("not reconnected") }
            #expect(now != url)
        }
    }
}
