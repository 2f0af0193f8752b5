import Foundation
import NATS
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One writer per session on the NATS backend, with real `reactor-server` processes under load: an
/// instance paused (SIGSTOP) until its sessions moved acknowledges nothing once resumed and lands no
/// record, and one killed (`kill -9`), or a NATS node killed under it, loses nothing acknowledged.
/// Afterwards every session's version is at least any version a client saw, its state replays only
/// the load's actions, its log holds every acknowledged `seq` in order, and a new action gives
/// version + 1.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSFailoverTests {
    static let admin = [("Authorization", "Bearer \(TestServer.adminToken)")]

    /// Starts instance `name` of the cluster on `servers`, under `prefix`, with a 3 s claim TTL: long
    /// enough that a heartbeat late on a busy machine does not let the sessions move a second time
    /// (which would make the resumed instance their rightful owner again).
    static func instance(
        _ name: String, servers: String, prefix: String, replicas: Int, claimTTL: Int = 3, extra: [String] = []
    ) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: [
                "--set", "storage.backend=nats", "--set", "storage.nats.servers=\(servers)", "--set",
                "storage.nats.prefix=\(prefix)",
                "--set", "storage.nats.instance=\(name)", "--set", "storage.nats.claimTTLSeconds=\(claimTTL)", "--set",
                "storage.nats.replicas=\(replicas)",
                "--set", "storage.nats.timeoutSeconds=2", "--set", "storage.nats.startTimeoutSeconds=60",
                // The whole action log is kept, so the state can be checked against its replay.
                "--set", "sessions.actionLogLimit=10000000", "--set", "sessions.actionLogBytes=1073741824",
            ] + extra,
            environment: ["REACTOR_ADMIN_TOKEN": TestServer.adminToken])
    }

    /// Runs `body` with instances `a` and `b` on one fresh `nats-server` (replicas 1, a prefix of their
    /// own), each killed afterwards (`a` resumed first, should the test have paused it).
    static func withPair(
        claimTTL: Int = 3, extraA: [String] = [], extraB: [String] = [],
        _ body: (ServerProcess, ServerProcess) async throws -> Void
    ) async throws {
        try await NATSServerProcess.with { nats in
            let prefix = "p" + String(UUID().uuidString.prefix(8)).lowercased()
            let a = try await instance(
                "a", servers: nats.url, prefix: prefix, replicas: 1, claimTTL: claimTTL, extra: extraA)
            defer {
                a.process.signal(SIGCONT)
                a.process.signal(SIGKILL)
            }
            let b = try await instance(
                "b", servers: nats.url, prefix: prefix, replicas: 1, claimTTL: claimTTL, extra: extraB)
            defer { b.process.signal(SIGKILL) }
            try await body(a, b)
        }
    }

    /// A raw `POST …/actions` (a `decrease`, which the load never sends) written to `server` without
    /// reading the answer.
    static func sendProbe(to server: ServerProcess, session id: String, wait: Bool) throws -> TestClient {
        let body = #"{"type":"decrease"}"#
        let client = try server.client(readTimeout: .seconds(30))
        try client.send(
            "POST /sessions/\(id)/actions\(wait ? "?wait=true" : "") HTTP/1.1\r\nHost: test\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        return client
    }

    /// Creates s0…s2 on `a`, starts the load on both instances and returns once `a` has acknowledged
    /// actions of every session.
    static func startLoad(creatingOn a: ServerProcess, alsoOn b: ServerProcess) async throws -> (
        ids: [String], load: ActionLoad
    ) {
        let ids = ["s0", "s1", "s2"]
        for id in ids {
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"\#(id)"}"#).status == 201
            )
        }
        let load = ActionLoad(ports: [a.port, b.port])
        load.start(ids)
        try await eventually("a to acknowledge actions of every session", within: .seconds(30)) {
            ids.allSatisfy { load.ledger.count($0, instance: 0) >= 3 }
        }
        return (ids, load)
    }

    /// The checks after the load: see the suite's comment.
    /// `headers` are what a request on each session carries (its token or a JWT, in those access modes).
    static func verify(
        _ ids: [String], on server: some TestEndpoint, ledger: AcknowledgementLedger,
        headers: (String) -> [(String, String)] = { _ in [] }
    ) async throws {
        // A NATS node just restarted may hold writes up for a moment (503 meanwhile): checked after.
        try await eventually("the instance to be healthy", within: .seconds(60)) {
            try server.client().request("GET", "/healthz").status == 200
        }
        for id in ids {
            try await eventually("\(id) to be served", within: .seconds(30)) {
                try server.client().request("GET", "/sessions/\(id)", headers: headers(id)).status == 200
            }
            let session = try server.client().request("GET", "/sessions/\(id)", headers: headers(id)).json()
            let version = try #require(session["version"] as? Int)
            let told = ledger[id]
            #expect(
                version >= told.highest, "\(id): version \(version) is older than \(told.highest), which a client saw")
            let entries = try actionLog(id, on: server)
            let seqs = entries.compactMap { $0["seq"] as? Int }
            #expect(seqs == Array(0..<seqs.count).map { $0 + 1 }, "\(id): the action log is not 1…n in order")
            let missing = told.acknowledged.subtracting(seqs)
            #expect(missing.isEmpty, "\(id): acknowledged actions are not in the log: \(missing.sorted())")
            let types = entries.map { ($0["action"] as? [String: Any])?["type"] as? String }
            let value = (session["state"] as? [String: Any])?["value"] as? Int
            #expect(!types.contains("decrease"), "\(id): an action sent to the stale owner was stored")
            // Every stored mutation is an increase (none of the stale owner's decreases), so the counter
            // equals its version. (Not the count of logged increases: an action's mutation may be stored
            // and its accept record not, when the process dies between them; it was never acknowledged.)
            #expect(
                value == version,
                """
                \(id): the state is not the replay of increases only: \
                value \(value.map(String.init) ?? "none") at version \(version), \
                log \(entries.map { "\($0["seq"] ?? "?"):\(($0["action"] as? [String: Any])?["type"] ?? "?")" })
                """
            )
            let next = try server.client().request(
                "POST", "/sessions/\(id)/actions?wait=true", headers: headers(id), body: #"{"type":"increase"}"#)
            #expect(
                try next.json()["version"] as? Int == version + 1,
                "\(id): a new action answered \(next.status) \(next.text)")
        }
    }

    /// Runs `body`; a failure carries the end of `server`'s log.
    static func whileLogging(_ server: ServerProcess, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            throw TestFailure("\(error); the end of its log:\n\(server.standardError.suffix(6000))")
        }
    }

    /// Every entry of session `id`'s action log, page by page.
    static func actionLog(_ id: String, on server: some TestEndpoint) throws -> [[String: Any]] {
        var entries: [[String: Any]] = []
        var since = 0
        while true {
            let page = try server.client().request(
                "GET", "/admin/sessions/\(id)/actions?since=\(since)&limit=1000", headers: admin
            ).json()
            entries += try #require(page["actions"] as? [[String: Any]])
            guard let next = page["next"] as? Int else { return entries }
            since = next
        }
    }

    /// Ends `instance`'s heartbeat in the instances bucket, as its expiry would: the others count it dead
    /// at once, however long the claim TTL.
    static func endHeartbeat(of instance: String, prefix: String, servers: String) async throws {
        var options = try NATSOptions(servers: servers)
        options.name = "failover-tests"
        let connection = NATSConnection(options: options)
        try await connection.connect(timeout: .seconds(10))
        defer { connection.close() }
        let bucket = KeyValue(
            jetStream: JetStream(connection: connection, timeout: .seconds(30)), bucket: "\(prefix)-instances")
        _ = try await bucket.delete(instance)
    }

    /// The stale owner is paused, its heartbeat ended by hand so b takes its sessions at once, and kept paused
    /// until its own lease (¾ of the 10 s claim TTL, by its monotonic clock) has lapsed: resumed, it is stale
    /// by the protocol's definition. A take-back (b's heartbeat 10 s late) cannot happen in the test's time,
    /// so every check about the stale owner always runs, and its precondition is checked, not assumed.
    @Test func aPausedOwnerAcknowledgesNothingOnceItsSessionsMoved() async throws {
        let claimTTL = 10
        try await NATSServerProcess.with { nats in
            let prefix = "f" + String(UUID().uuidString.prefix(8)).lowercased()
            let a = try await Self.instance("a", servers: nats.url, prefix: prefix, replicas: 1, claimTTL: claimTTL)
            defer {
                a.process.signal(SIGCONT)
                a.process.signal(SIGKILL)
            }
            let b = try await Self.instance("b", servers: nats.url, prefix: prefix, replicas: 1, claimTTL: claimTTL)
            defer { b.process.signal(SIGKILL) }
            let (ids, load) = try await Self.startLoad(creatingOn: a, alsoOn: b)
            load.prefer(1)
            // Every thread stopped, not only signalled: until then it still reads and answers.
            try await a.process.pause()
            let paused = ContinuousClock.now
            try await Self.endHeartbeat(of: "a", prefix: prefix, servers: nats.url)
            // Sent while it is paused: they wait in its sockets until it runs again.
            let probes = try ids.flatMap { id in
                [
                    try Self.sendProbe(to: a, session: id, wait: true),
                    try Self.sendProbe(to: a, session: id, wait: false),
                ]
            }
            try await Self.whileLogging(b) {
                try await eventually("b to take every session over and acknowledge actions", within: .seconds(60)) {
                    ids.allSatisfy { load.ledger.count($0, instance: 1) >= 3 }
                }
            }
            // Not a wait for an event: a's lease runs out by its clock while it is stopped (nothing can tell).
            let lease = Duration.seconds(claimTTL) * 3 / 4
            let left = lease + .milliseconds(500) - (ContinuousClock.now - paused)
            if left > .zero { try await Task.sleep(for: left) }
            a.process.signal(SIGCONT)
            let resumed = a.standardError.count
            for probe in probes {
                // Refused (503) or cut off: anything but an acknowledgement.
                let answer = try? probe.readResponse(method: "POST")
                #expect(
                    answer.map { !(200..<300).contains($0.status) } ?? true,
                    """
                    the stale owner acknowledged an action after its session moved: \(answer?.text ?? ""); \
                    its log since: \(a.standardError.dropFirst(resumed).suffix(6000))
                    """
                )
            }
            // It goes on running: records it lost are refused, not a reason to stop.
            #expect(
                a.process.isRunning, "the resumed owner stopped: \(a.standardError.dropFirst(resumed).suffix(4000))")
            try load.stop()
            // The precondition of the checks: the stale owner never became a rightful owner again (by a
            // take-back, or a hand-off from b that only a request sent to it afterwards could ask for).
            #expect(
                !a.standardError.contains("took a session over"),
                "the resumed owner took a session back: \(a.standardError.dropFirst(resumed).suffix(4000))")
            try await Self.verify(ids, on: b, ledger: load.ledger)
            // What is stored, read back by an instance that has none of it in memory.
            a.process.signal(SIGKILL)
            try await b.stop()
            let c = try await Self.instance("c", servers: nats.url, prefix: prefix, replicas: 1, claimTTL: claimTTL)
            try await Self.verify(ids, on: c, ledger: load.ledger)
        }
    }

    @Test func killingAnInstanceOrANATSNodeUnderLoadLosesNothingAcknowledged() async throws {
        try await NATSTestCluster.with { cluster in
            let prefix = "k" + String(UUID().uuidString.prefix(8)).lowercased()
            var a = try await Self.instance("a", servers: cluster.urls, prefix: prefix, replicas: 3)
            let b = try await Self.instance("b", servers: cluster.urls, prefix: prefix, replicas: 3)
            defer { b.process.signal(SIGKILL) }
            let (ids, load) = try await Self.startLoad(creatingOn: a, alsoOn: b)
            load.prefer(1)
            #expect(try await a.stop(signal: SIGKILL) == .signalled(SIGKILL))
            try await Self.whileLogging(b) {
                try await eventually("b to take every session over and acknowledge actions", within: .seconds(60)) {
                    ids.allSatisfy { load.ledger.count($0, instance: 1) >= 3 }
                }
            }

            // A NATS node dies under the load and comes back: with 3 replicas, a quorum remains.
            let before = ids.map { load.ledger.count($0, instance: 1) }
            try await cluster.nodes[0].kill()
            try await eventually("b to acknowledge more actions with a NATS node down", within: .seconds(60)) {
                zip(ids, before).allSatisfy { load.ledger.count($0, instance: 1) >= $1 + 3 }
            }
            try await cluster.nodes[0].restart()

            // The killed instance comes back under its name and takes new work.
            a = try await Self.instance("a", servers: cluster.urls, prefix: prefix, replicas: 3)
            defer { a.process.signal(SIGKILL) }
            load.setPort(a.port, of: 0)
            try load.stop()
            try await Self.verify(ids, on: b, ledger: load.ledger)
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"after"}"#).status == 201)
            // What is stored, read back by an instance that has none of it in memory.
            #expect(try await b.stop(signal: SIGKILL) == .signalled(SIGKILL))
            try await Self.verify(ids, on: a, ledger: load.ledger)
        }
    }
}
