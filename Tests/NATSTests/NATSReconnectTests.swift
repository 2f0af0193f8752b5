import Logs
import NATS
import ReactorServerTesting
import Testing

@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct NATSReconnectTests {
    @Test func survivesAKill9OfItsOnlyServerAndResubscribes() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url) { $0.maxReconnectWait = .milliseconds(200) }
            defer { connection.close() }
            let statuses = statusRecorder(connection)
            let events = Recorder<String>()
            _ = try connection.subscribe(to: "events") { events.record($0.text) }
            _ = try connection.subscribe(to: "echo") { message in
                try? connection.publish(message.replyTo!, payload: message.payload)
            }
            _ = try connection.subscribe(to: "silent") { _ in }
            try connection.publish("events", payload: "before".bytes)
            try await events.waitForCount(1, "an event before the kill")

            // A request in flight when the server dies: its outcome is unknown, so it fails clearly.
            let inFlight = Recorder<Result<NATSMessage, NATSError>>()
            try connection.request("silent", payload: [UInt8](), timeout: .seconds(60)) { inFlight.record($0) }
            try await connection.flush()
            try await server.kill()
            let lost = try await inFlight.waitForCount(1, "the in-flight request to fail")
            guard case .failure(.connectionLost(let named, _)) = lost[0] else {
                throw TestFailure("expected connectionLost, got \(lost[0])")
            }
            #expect(named == server.url)
            try await statuses.waitUntil("reconnecting") { $0.contains(.reconnecting) }

            // Requests made while disconnected wait for the new connection (within their timeout).
            let queued = Recorder<Result<NATSMessage, NATSError>>()
            try connection.request("echo", payload: "queued".bytes, timeout: .seconds(30)) { queued.record($0) }
            try await server.restart()
            try await statuses.waitForConnected()
            let answer = try await queued.waitForCount(1, "the queued request's reply")
            #expect((try? answer[0].get().text) == "queued")

            try connection.publish("events", payload: "after".bytes)
            try await events.waitUntil("the old subscription to receive again") { $0 == ["before", "after"] }
        }
    }

    /// A preferred server (a stream's leader) is moved to at once, the same preference again moves nothing, and
    /// while the preferred server is down any other one serves.
    @Test func movesToThePreferredServerAndFailsOverWhileItIsDown() async throws {
        let first = try await NATSServerProcess.start(name: "first", jetStream: false)
        let second: NATSServerProcess
        do {
            second = try await NATSServerProcess.start(name: "second", jetStream: false)
        } catch {
            await first.shutdown()
            throw error
        }
        do {
            let connection = try await connect("\(first.url),\(second.url)") {
                $0.maxReconnectWait = .milliseconds(200)
                $0.discoverServers = false
            }
            defer { connection.close() }
            #expect(connection.serverInfo.serverName == "first")
            let statuses = statusRecorder(connection)
            let echoes = Recorder<String>()
            _ = try connection.subscribe(to: "echo") { echoes.record($0.text) }

            connection.prefer(serverNamed: "second")
            #expect(try await statuses.waitForConnected() == second.url)
            #expect(connection.serverInfo.serverName == "second")
            try connection.publish("echo", payload: "on second".bytes)
            try await echoes.waitForCount(1, "the subscription renewed on the preferred server")
            connection.prefer(serverNamed: "second")
            try await connection.flush()
            #expect(statuses.values.count == 2, "the same preference again moved the connection: \(statuses.values)")

            // The preferred server dies: the other serves; once it is back and the other dies, it serves again.
            try await second.kill()
            #expect(try await statuses.waitForConnected(after: 2) == first.url)
            try await second.restart()
            try await first.kill()
            #expect(try await statuses.waitForConnected(after: 4) == second.url)
        } catch {
            await first.shutdown()
            await second.shutdown()
            throw error
        }
        await first.shutdown()
        await second.shutdown()
    }

    @Test func failsOverToAnotherNodeLearnedFromTheCluster() async throws {
        try await NATSTestCluster.with { cluster in
            // Configured with the first node only: the others come from INFO's connect_urls.
            let connection = try await connect(cluster.nodes[0].url) { $0.maxReconnectWait = .milliseconds(200) }
            defer { connection.close() }
            let statuses = statusRecorder(connection)
            let peer = try await connect(cluster.nodes[1].url)
            defer { peer.close() }
            try await waitUntilKnown(connection, count: 3)

            let events = Recorder<String>()
            _ = try connection.subscribe(to: "events") { events.record($0.text) }
            try await connection.flush()
            try await cluster.nodes[0].kill()
            let server = try await statuses.waitForConnected()
            #expect(server != cluster.nodes[0].url)
            // The subscription was renewed on the new node: a message published through another node arrives.
            try await publishUntilReceived(peer, "events", events)
        }
    }

    @Test func triesTheConfiguredServersInTurn() async throws {
        try await NATSTestCluster.with { cluster in
            let connection = try await connect(cluster.urls) {
                $0.discoverServers = false
                $0.maxReconnectWait = .milliseconds(200)
            }
            defer { connection.close() }
            #expect(connection.status == .connected(server: cluster.nodes[0].url))
            let statuses = statusRecorder(connection)
            try await cluster.nodes[0].kill()
            try await statuses.waitForConnected()
            #expect(connection.status == .connected(server: cluster.nodes[1].url))
            try await cluster.nodes[1].kill()
            try await statuses.waitUntil("a second reconnect") {
                $0.filter { if case .connected = $0 { true } else { false } }.count == 2
            }
            #expect(connection.status == .connected(server: cluster.nodes[2].url))
        }
    }

    /// Waits until the connection knows `count` servers (INFO updates arrive as routes form).
    func waitUntilKnown(_ connection: NATSConnection, count: Int) async throws {
        let known = Recorder<Int>()
        let ticker = Task {
            while !Task.isCancelled {
                known.record(connection.knownServers.count)
                try await connection.flush()
            }
        }
        defer { ticker.cancel() }
        try await known.waitUntil("\(count) known servers", within: .seconds(15)) { $0.last ?? 0 >= count }
    }

    /// Publishes through `publisher` until `recorder` sees the message (the new subscription
    /// propagates through the cluster's routes shortly after the reconnect).
    func publishUntilReceived(_ publisher: NATSConnection, _ subject: String, _ recorder: Recorder<String>) async throws
    {
        let ticker = Task {
            while !Task.isCancelled {
                try publisher.publish(subject, payload: "after failover".bytes)
                try await publisher.flush()
            }
        }
        defer { ticker.cancel() }
        try await recorder.waitUntil("a message through another node after failover", within: .seconds(15)) {
            $0.contains("after failover")
        }
    }
}
