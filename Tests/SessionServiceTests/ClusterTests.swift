import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's cluster on loopback (``ReactorCluster``: 3 NATS nodes with R3 streams, 3 instances,
/// HAProxy from `Config/cluster/haproxy.cfg` in front), driven only through the proxy as clients
/// would: actions with `?wait=true` and `202`, event streams that resume with `Last-Event-ID`. An
/// instance killed (`kill -9`) and restarted, then a NATS node killed and restarted, lose nothing
/// acknowledged (``NATSFailoverTests/verify(_:on:ledger:onlyLoad:staleWriteKnown:)``), and no
/// stream shows a version going backwards. An instance that cannot reach JetStream answers 503 on
/// `/healthz`, and HAProxy routes around it.
@Suite(.serialized, .timeLimit(.minutes(10)), .enabled(if: ReactorCluster.canRun, "nats-server or haproxy is not installed (apt-get install nats-server haproxy)"))
struct ClusterTests {
    /// Every instance keeps its whole action log: the checks replay it.
    static let settings: [(key: String, value: String)] = [("sessions.actionLogLimit", "10000000"), ("sessions.actionLogBytes", "1073741824")]

    /// Waits until every session of `ids` has `more` acknowledgements beyond `before` (its counts
    /// when this was called); fails with the cluster's logs.
    static func progress(_ what: String, _ ids: [String], _ load: ActionLoad, more: Int = 3, in cluster: ReactorCluster, within bound: Duration = .seconds(90)) async throws {
        let before = ids.map { load.ledger.count($0, instance: 0) }
        do {
            try await eventually(what, within: bound) { zip(ids, before).allSatisfy { load.ledger.count($0, instance: 0) >= $1 + more } }
        } catch {
            let counts = zip(ids, before).map { "\($0): \($1) → \(load.ledger.count($0, instance: 0))" }
            throw TestFailure("\(error); acknowledgements per session: \(counts); failures: \(load.failures)\n\(cluster.logs)")
        }
    }

    @Test func killingAnInstanceThenANATSNodeUnderLoadThroughHAProxyLosesNothingAcknowledged() async throws {
        try await ReactorCluster.with(settings: Self.settings) { cluster in
            let ids = (0..<6).map { "s\($0)" }
            var runs: [String: ClusterInstance] = [:]
            for id in ids { runs[id] = try cluster.createSession(id) }
            let load = ActionLoad(ports: [cluster.proxy.port], alternating: true)
            let subscribers = ResumingSubscribers(port: cluster.proxy.port, ledger: load.ledger)
            load.start(ids)
            subscribers.start(ids)
            do {
                try await Self.progress("every session to be acknowledged", ids, load, in: cluster)

                // (a) The instance running s0 dies and comes back under its name and port: its sessions
                // move to other instances, then back to it through hand-offs.
                let victim = try #require(runs["s0"])
                try await victim.kill()
                try await cluster.proxy.waitForServer(victim.name, "DOWN", within: .seconds(10))
                try await Self.progress("every session to be acknowledged with \(victim.name) killed", ids, load, in: cluster)
                try await victim.start()
                try await cluster.proxy.waitForServer(victim.name, "UP")
                try await Self.progress("every session to be acknowledged with \(victim.name) back", ids, load, in: cluster)

                // (b) The NATS node leading the records stream dies and comes back: R3 keeps a quorum.
                let records = "\(cluster.prefix)-records"
                let node = try await cluster.nats.leader(of: records) ?? cluster.nats.nodes[0]
                try await node.kill()
                try await Self.progress("every session to be acknowledged with NATS node \(node.name) killed", ids, load, in: cluster)
                try await cluster.nats.restart(node)
                try await Self.progress("every session to be acknowledged with NATS node \(node.name) back", ids, load, in: cluster)
            } catch {
                try? load.stop()
                try? subscribers.stop()
                throw error
            }
            try load.stop()
            try subscribers.stop()
            // Failed requests are expected while instances and nodes die; acknowledged ones must all be there.
            print("ClusterTests: requests without acknowledgement: \(load.failures); event streams: \(subscribers.tally)")
            #expect(subscribers.violations.isEmpty, "event streams went backwards: \(subscribers.violations.prefix(20))")
            #expect(subscribers.tally["streams", default: 0] > ids.count, "no event stream was resumed")
            for instance in cluster.instances {
                #expect(instance.isRunning, "instance \(instance.name) stopped by itself: \(instance.log.suffix(4000))")
            }
            // Checked on the instance that runs each session (the one its requests hash to): the admin
            // routes through HAProxy hash on /admin/sessions and reach any instance.
            for id in ids {
                var owner: ClusterInstance?
                try await eventually("\(id) to be served through HAProxy", within: .seconds(60)) {
                    let answer = try cluster.proxy.client().request("GET", "/sessions/\(id)")
                    owner = cluster.servedBy(answer)
                    return answer.status == 200
                }
                let process = try #require(owner?.process)
                try await NATSFailoverTests.verify([id], on: process, ledger: load.ledger)
            }
        }
    }

    @Test func anInstanceCutOffFromJetStreamAnswers503AndHAProxyRoutesAroundIt() async throws {
        // i3 knows only NATS node n3, and the nodes tell clients of no other (no_advertise), so with
        // n3 gone i3 is cut off from JetStream as by a partition; the others know every node.
        let servers: (Int, NATSTestCluster) -> String = { index, nats in index == 2 ? nats.nodes[2].url : nats.urls }
        try await ReactorCluster.with(settings: Self.settings, servers: servers, routing: "no_advertise: true") { cluster in
            let cut = cluster.instances[2]
            let node = cluster.nats.nodes[2]
            let id = try cluster.sessionID("h", hashingTo: cut)
            try cluster.createSession(id)
            let first = try cluster.proxy.client().request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(first.status == 200 && cluster.servedBy(first) === cut, "\(first.status) from \(first.header("X-Served-By") ?? "?"): \(first.text)")

            try await node.kill()
            try await eventually("\(cut.name)'s /healthz to answer 503 with its NATS node gone", within: .seconds(30)) {
                try cut.client().request("GET", "/healthz").status == 503
            }
            let health = try cut.client().request("GET", "/healthz")
            #expect(health.errorMessage?.contains("127.0.0.1:\(node.port)") == true, "the answer does not name the server: \(health.text)")
            try await cluster.proxy.waitForServer(cut.name, "DOWN", within: .seconds(10))
            // Once i3's claim lapsed, another instance takes the session over and goes on from version 1.
            var moved: TestResponse?
            try await eventually("another instance to serve \(id) through HAProxy", within: .seconds(60)) {
                let answer = try cluster.proxy.client().request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
                moved = answer
                return answer.status == 200
            }
            let answer = try #require(moved)
            #expect(cluster.servedBy(answer) !== cut, "served by \(answer.header("X-Served-By") ?? "?")")
            #expect(try answer.json()["version"] as? Int == 2, "\(answer.text)")

            try await cluster.nats.restart(node)
            try await eventually("\(cut.name)'s /healthz to answer 200 with its NATS node back", within: .seconds(60)) {
                try cut.client().request("GET", "/healthz").status == 200
            }
            try await cluster.proxy.waitForServer(cut.name, "UP", within: .seconds(10))
        }
    }

    @Test func aFourthInstanceAddedThroughTheRuntimeAPIGetsNewSessions() async throws {
        try await ReactorCluster.with(settings: Self.settings) { cluster in
            let fourth = try await cluster.addInstance()
            #expect(fourth.name == "i4")
            let id = try cluster.sessionID("n", hashingTo: fourth)
            #expect(try cluster.createSession(id) === fourth)
            let stream = try cluster.proxy.client()
            try stream.openEventStream("/sessions/\(id)/events")
            #expect(try stream.nextEvent().id == "0")
            let answer = try cluster.proxy.client().request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(answer.status == 200 && cluster.servedBy(answer) === fourth, "\(answer.status) from \(answer.header("X-Served-By") ?? "?")")
            #expect(try stream.nextEvent().id == "1")
        }
    }

    @Test func theProxyConfigurationIsTheShippedFileWithOnlyPortsAndSocketChanged() throws {
        let shipped = try String(contentsOfFile: HAProxyProcess.shippedConfiguration, encoding: .utf8)
        let rendered = try HAProxyProcess.configuration(from: shipped, port: 20001, servers: [("a", 20002), ("b", 20003)], socket: "/tmp/x/haproxy.sock")
        let lines = rendered.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.filter { $0.hasPrefix("server ") } == ["server a 127.0.0.1:20002", "server b 127.0.0.1:20003"])
        #expect(lines.contains("bind 127.0.0.1:20001"))
        #expect(lines.contains("stats socket /tmp/x/haproxy.sock mode 600 level admin"))
        for setting in ["balance uri depth 2", "hash-type consistent", "option httpchk GET /healthz", "option forwardfor"] {
            #expect(lines.contains(setting), "the shipped haproxy.cfg lacks \(setting)")
        }
        let changed = Set(shipped.split(separator: "\n").map(String.init)).symmetricDifference(rendered.split(separator: "\n").map(String.init))
        #expect(changed.allSatisfy { $0.contains("bind ") || $0.contains("server ") || $0.contains("stats socket ") }, "more changed: \(changed)")
        #expect(throws: TestFailure.self) { try HAProxyProcess.configuration(from: "frontend f\n  bind :80\n", port: 1, servers: [], socket: "/s") }
    }
}
