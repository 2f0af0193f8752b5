import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The README's cluster on loopback (``ReactorCluster``: 3 NATS nodes with R3 streams, 3 instances,
/// HAProxy from `Config/cluster/haproxy.cfg` in front), driven through the proxy as clients would:
/// actions with `?wait=true` and `202`, event streams that resume with `Last-Event-ID`
/// (``underLoad(_:)``). Instances killed and restarted, joining, or paused (SIGSTOP) until their
/// sessions moved, and a NATS node killed and restarted, lose nothing acknowledged
/// (``NATSFailoverTests/verify(_:on:ledger:)``), and no stream shows a version going
/// backwards. An instance that cannot reach JetStream
/// answers 503 on `/healthz`, and HAProxy routes around it.
@Suite(
    .offThePool, .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ReactorCluster.canRun, "nats-server or haproxy is not installed (apt-get install nats-server haproxy)")
)
struct ClusterTests {
    /// Every instance keeps its whole action log: the checks replay it.
    static let settings: [(key: String, value: String)] = [
        ("sessions.actionLogLimit", "10000000"), ("sessions.actionLogBytes", "1073741824"),
    ]

    @Test func instancesDyingJoiningAndPausedUnderLoadThroughHAProxyLoseNothingAcknowledged() async throws {
        try await Self.underLoad { cluster, load in
            try await Self.killAndRestart(cluster, load)
            try await Self.join(cluster, load)
            try await Self.pauseAndResume(cluster, load)
        }
    }

    /// The same moves with every request carrying a session's token, or a JWT: sessions and their streams
    /// follow the moves with the credentials they were opened with.
    @Test(arguments: [ClusterAccess.token, .jwt])
    func anInstanceDyingAndOneJoiningUnderLoadInEachAccessMode(access: ClusterAccess) async throws {
        try await Self.underLoad(access) { cluster, load in
            try await Self.killAndRestart(cluster, load)
            try await Self.join(cluster, load)
        }
    }

    /// The ids of the sessions HAProxy sends to `instance` now.
    static func sessions(of instance: ClusterInstance, _ cluster: ReactorCluster, _ ids: [String]) throws -> [String] {
        try ids.filter { try cluster.instance(hashing: $0) === instance }
    }

    /// The ids of the sessions `instance` runs now (its part of the admin list): where requests are sent is not
    /// always where a session runs (a request reaching the instance that just handed it off gets a 503).
    static func sessions(runningOn instance: ClusterInstance, _ ids: [String]) throws -> [String] {
        let answer = try instance.client().request(
            "GET", "/admin/sessions?scope=local", headers: NATSFailoverTests.admin)
        guard answer.status == 200 else {
            throw TestFailure("\(instance.name)'s admin list answered \(answer.status): \(answer.text.prefix(300))")
        }
        let list = try answer.json()
        let running = Set((list["sessions"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        return ids.filter(running.contains)
    }

    /// (a) The instance running s0 dies: its sessions are taken over (counted) by the others and served
    /// there; it comes back under its name and port, and they are handed back to it (counted).
    static func killAndRestart(_ cluster: ReactorCluster, _ load: ClusterLoad) async throws {
        let victim = try cluster.instance(hashing: "s0")
        // The load reaches every session within moments of starting; on a busy machine a session sent to the victim
        // may still be on its way there (loaded elsewhere first, then handed over), so this waits for one to be.
        var its: [String] = []
        try await eventually("\(victim.name) to run one of \(load.ids)", within: .seconds(30)) {
            // A busy instance's admin list may time out or answer 503 now and then: looked at again.
            its = (try? sessions(runningOn: victim, load.ids)) ?? []
            return !its.isEmpty
        }
        // Those it runs and is sent: they come back to it.
        let returning = try sessions(of: victim, cluster, its)
        let takeovers = try load.total("reactor_storage_takeovers_total", excluding: victim)
        try await victim.kill()
        try await cluster.proxy.waitForServer(victim.name, "DOWN", within: .seconds(10))
        try await load.progress("every session to be acknowledged with \(victim.name) killed")
        for id in its {
            let now = try cluster.instance(hashing: id)
            #expect(now !== victim, "\(id) is still sent to the dead \(victim.name)")
            try await load.servedBy(now, id)
        }
        let tookOver = try load.total("reactor_storage_takeovers_total", excluding: victim) - takeovers
        // At least one: a session listed on it may have been on its way to another instance as it died.
        #expect(tookOver >= 1, "\(its) ran on the dead \(victim.name), and no instance took one over")

        let handOffs = try load.total("reactor_storage_handoffs_total", excluding: victim)
        try await victim.start()
        try await cluster.proxy.waitForServer(victim.name, "UP")
        try await load.progress("every session to be acknowledged with \(victim.name) back")
        for id in returning { try await load.servedBy(victim, id) }
        let handedBack = try load.total("reactor_storage_handoffs_total", excluding: victim) - handOffs
        #expect(
            handedBack >= Double(returning.count),
            "\(returning.count) sessions back on \(victim.name), \(handedBack) hand-offs")
    }

    /// (b) A fourth instance joins: the sessions whose requests now hash to it are handed to it (counted).
    static func join(_ cluster: ReactorCluster, _ load: ClusterLoad) async throws {
        let handOffs = try load.total("reactor_storage_handoffs_total")
        let fourth = try await cluster.addInstance()
        let moving = try sessions(of: fourth, cluster, load.ids)
        #expect(!moving.isEmpty, "no session of \(load.ids) hashes to \(fourth.name)")
        try await load.progress("every session to be acknowledged with \(fourth.name) in")
        for id in moving { try await load.servedBy(fourth, id) }
        let handed = try load.total("reactor_storage_handoffs_total", excluding: fourth) - handOffs
        #expect(handed >= Double(moving.count), "\(moving.count) sessions moved to \(fourth.name), \(handed) hand-offs")
    }

    /// (c) The instance running s1 is paused (SIGSTOP) until its sessions moved (taken over, counted), then
    /// resumed: it drops what it lost, and its sessions come back to it through hand-offs. It is kept out
    /// of HAProxy until it is healthy again. (That a resumed stale owner acknowledges nothing it received
    /// while paused is NATSFailoverTests' to check: here a request reaching it may legitimately move the
    /// session back first.)
    static func pauseAndResume(_ cluster: ReactorCluster, _ load: ClusterLoad) async throws {
        let paused = try cluster.instance(hashing: "s1")
        let its = try sessions(runningOn: paused, load.ids)
        #expect(!its.isEmpty, "\(paused.name) runs none of \(load.ids)")
        let returning = try sessions(of: paused, cluster, its)
        let takeovers = try load.total("reactor_storage_takeovers_total", excluding: paused)
        load.paused = paused.name
        paused.pause()
        try await cluster.proxy.waitForServer(paused.name, "DOWN", within: .seconds(10))
        try cluster.proxy.command("set server \(HAProxyProcess.backend)/\(paused.name) state maint")
        try await load.progress("every session to be acknowledged with \(paused.name) paused")
        for id in its { try await load.servedBy(try cluster.instance(hashing: id), id) }
        let tookOver = try load.total("reactor_storage_takeovers_total", excluding: paused) - takeovers
        #expect(tookOver >= 1, "\(its) ran on the paused \(paused.name), and no instance took one over")
        paused.resume()
        // Resumed, it finds its claims lapsed, drops what it lost (refusing what showed its records
        // that can never be stored) and answers /healthz again once its heartbeat is back.
        try await eventually("\(paused.name) to be healthy again", within: .seconds(30)) {
            (try? paused.client(readTimeout: .seconds(2)).request("GET", "/healthz").status) == 200
        }
        #expect(paused.isRunning, "\(paused.name) stopped: \(paused.log.suffix(4000))")
        try cluster.proxy.command("set server \(HAProxyProcess.backend)/\(paused.name) state ready")
        try await cluster.proxy.waitForServer(paused.name, "UP")
        try await load.progress("every session to be acknowledged with \(paused.name) back")
        for id in returning { try await load.servedBy(paused, id) }
    }

    @Test func aNATSNodeDyingUnderLoadThroughHAProxyLosesNothingAcknowledged() async throws {
        try await Self.underLoad { cluster, load in
            // The node leading the records stream dies and comes back: R3 keeps a quorum.
            let node = try await cluster.nats.leader(of: "\(cluster.prefix)-records") ?? cluster.nats.nodes[0]
            try await node.kill()
            try await load.progress("every session to be acknowledged with NATS node \(node.name) killed")
            try await cluster.nats.restart(node)
            try await load.progress("every session to be acknowledged with NATS node \(node.name) back")
        }
    }

    @Test func anInstanceCutOffFromJetStreamAnswers503AndHAProxyRoutesAroundIt() async throws {
        // i3 knows only NATS node n3, and the nodes tell clients of no other (no_advertise), so with
        // n3 gone i3 is cut off from JetStream as by a partition; the others know every node.
        let servers: (Int, NATSTestCluster) -> String = { index, nats in index == 2 ? nats.nodes[2].url : nats.urls }
        try await ReactorCluster.with(settings: Self.settings, servers: servers, routing: "no_advertise: true") {
            cluster in
            do {
                try await Self.cutOff(cluster)
            } catch {
                // Which instance did what: one CI run saw a connection closed unanswered here, another i3 whose
                // heartbeats to its restarted node went unanswered for a minute (the node's own log says why).
                throw TestFailure(
                    "\(error)\n\(cluster.logs.suffix(12000))\n\(cluster.instances[2].name), whole:\n"
                        + Self.squeezed(cluster.instances[2].log) + "\nNATS node \(cluster.nats.nodes[2].name):\n"
                        + cluster.nats.nodes[2].log.suffix(8000))
            }
        }
    }

    /// `log` with each repeated warning kept three times and counted after that, for a failure message.
    static func squeezed(_ log: String) -> String {
        var seen: [Substring: Int] = [:]
        var lines: [Substring] = []
        for line in log.split(separator: "\n") {
            let message = line.firstRange(of: #""msg":""#).map { line[$0.upperBound...].prefix(60) } ?? line
            let count = (seen[message] ?? 0) + 1
            seen[message] = count
            if count <= 3 { lines.append(line) }
        }
        let repeated = seen.filter { $0.value > 3 }.map { "\($0.value) times: \($0.key)" }
        return (lines.map(String.init) + repeated).joined(separator: "\n")
    }

    static func cutOff(_ cluster: ReactorCluster) async throws {
        let cut = cluster.instances[2]
        let node = cluster.nats.nodes[2]
        let id = try cluster.sessionID("h", hashingTo: cut)
        try cluster.createSession(id)
        let first = try cluster.proxy.client().request(
            "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        #expect(
            first.status == 200 && cluster.servedBy(first) === cut,
            "\(first.status) from \(first.header("X-Served-By") ?? "?"): \(first.text)")

        try await node.kill()
        try await eventually("\(cut.name)'s /healthz to answer 503 with its NATS node gone", within: .seconds(30)) {
            try cut.client().request("GET", "/healthz").status == 503
        }
        let health = try cut.client().request("GET", "/healthz")
        #expect(
            health.errorMessage?.contains("127.0.0.1:\(node.port)") == true,
            "the answer does not name the server: \(health.text)")
        try await cluster.proxy.waitForServer(cut.name, "DOWN", within: .seconds(10))
        // Once i3's claim lapsed, another instance takes the session over and goes on from version 1.
        var moved: TestResponse?
        // Meanwhile HAProxy may close a request unanswered (its server marked down under a busy machine
        // shuts its sessions): a client tries again, as this loop does.
        // An action without an answer may have been applied: the version is checked against every attempt.
        var unanswered = 0
        try await eventually("another instance to serve \(id) through HAProxy", within: .seconds(60)) {
            guard
                let answer = try? cluster.proxy.client().request(
                    "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
            else {
                unanswered += 1
                return false
            }
            moved = answer
            return answer.status == 200
        }
        let answer = try #require(moved)
        #expect(cluster.servedBy(answer) !== cut, "served by \(answer.header("X-Served-By") ?? "?")")
        let version = try answer.json()["version"] as? Int ?? 0
        #expect(
            (2...2 + unanswered).contains(version),
            "version \(version) after \(unanswered) unanswered attempts: \(answer.text)")

        try await cluster.nats.restart(node)
        try await eventually("\(cut.name)'s /healthz to answer 200 with its NATS node back", within: .seconds(60)) {
            try cut.client().request("GET", "/healthz").status == 200
        }
        try await cluster.proxy.waitForServer(cut.name, "UP", within: .seconds(10))
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
            let answer = try cluster.proxy.client().request(
                "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(
                answer.status == 200 && cluster.servedBy(answer) === fourth,
                "\(answer.status) from \(answer.header("X-Served-By") ?? "?")")
            #expect(try stream.nextEvent().id == "1")
        }
    }

    @Test func theProxyConfigurationIsTheShippedFileWithOnlyPortsAndSocketChanged() throws {
        let shipped = try String(contentsOfFile: HAProxyProcess.shippedConfiguration, encoding: .utf8)
        let rendered = try HAProxyProcess.configuration(
            from: shipped, port: 20001, servers: [("a", 20002), ("b", 20003)], socket: "/tmp/x/haproxy.sock")
        let lines = rendered.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.filter { $0.hasPrefix("server ") } == ["server a 127.0.0.1:20002", "server b 127.0.0.1:20003"])
        #expect(lines.contains("bind 127.0.0.1:20001"))
        #expect(lines.contains("stats socket /tmp/x/haproxy.sock mode 600 level admin"))
        for setting in [
            "balance uri depth 2", "hash-type consistent", "option httpchk GET /healthz", "option forwardfor",
        ] {
            #expect(lines.contains(setting), "the shipped haproxy.cfg lacks \(setting)")
        }
        let changed = Set(shipped.split(separator: "\n").map(String.init)).symmetricDifference(
            rendered.split(separator: "\n").map(String.init))
        #expect(
            changed.allSatisfy { $0.contains("bind ") || $0.contains("server ") || $0.contains("stats socket ") },
            "more changed: \(changed)")
        #expect(throws: TestFailure.self) {
            try HAProxyProcess.configuration(from: "frontend f\n  bind :80\n", port: 1, servers: [], socket: "/s")
        }
    }
}
