import Foundation
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The load of the cluster tests: sessions s0…s11, each created on the instance its requests hash to,
/// with actions (``ActionLoad``, `?wait=true` and `202` alternating) and an event-stream client
/// (``ResumingSubscribers``) each, plus one multiplexed stream of them all, all through HAProxy, with the
/// credentials of the access mode.
final class ClusterLoad: Sendable {
    let cluster: ReactorCluster
    let ids: [String]
    let credentials: ClusterCredentials
    let actions: ActionLoad
    let subscribers: ResumingSubscribers
    private let pausedName = Mutex<String?>(nil)

    init(cluster: ReactorCluster, ids: [String], credentials: ClusterCredentials) {
        self.cluster = cluster
        self.ids = ids
        self.credentials = credentials
        actions = ActionLoad(ports: [cluster.proxy.port], alternating: true, credentials: credentials)
        subscribers = ResumingSubscribers(port: cluster.proxy.port, ledger: actions.ledger, credentials: credentials)
    }

    /// Sums counter `name` over the instances running now but `excluded` (a restarted instance counts from 0 again).
    func total(_ name: String, excluding excluded: ClusterInstance? = nil) throws -> Double {
        try cluster.instances.filter { $0.isRunning && $0 !== excluded && $0.name != paused }.reduce(0) {
            sum, instance in
            let text = try instance.client().request("GET", "/metrics").text
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return sum + (line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0)
        }
    }

    /// Waits until session `id`, asked through HAProxy, is served by `instance` (it moved there).
    func servedBy(_ instance: ClusterInstance, _ id: String, within bound: Duration = .seconds(60)) async throws {
        var last = "nothing"
        do {
            try await eventually("\(id) to be served by \(instance.name)", within: bound) {
                let answer = try cluster.proxy.client().request(
                    "GET", "/sessions/\(id)", headers: credentials.headers(id))
                last = "\(answer.status) from \(answer.header("X-Served-By") ?? "?")"
                return answer.status == 200 && cluster.servedBy(answer) === instance
            }
        } catch {
            throw TestFailure("\(error); last answer: \(last)")
        }
    }

    /// The instance a test paused on purpose (its health checks time out by design).
    var paused: String? {
        get { pausedName.withLock { $0 } }
        set { pausedName.withLock { $0 = newValue } }
    }

    /// Waits until every session has `more` acknowledgements beyond its count when this was called;
    /// fails with the cluster's logs.
    /// For each of `ids`: which instance lists it as running, and what a fresh multiplexed stream of it alone,
    /// opened on each instance directly, shows first (diagnostics for a stream that stopped moving).
    func probe(_ ids: [String]) -> String {
        ids.map { id in
            let views = cluster.instances.filter(\.isRunning).map { instance -> String in
                let admin = [("Authorization", "Bearer \(TestServer.adminToken)")]
                let local =
                    (try? instance.client(readTimeout: .seconds(3)).request(
                        "GET", "/admin/sessions?scope=local", headers: admin
                    ).text) ?? ""
                let runs = local.contains(#""id":"\#(id)""#) ? "runs it" : "does not run it"
                guard let client = try? instance.client(readTimeout: .seconds(3)) else {
                    return "\(instance.name): no connection"
                }
                let (headers, query) = credentials.multiplexed([id])
                let first: String
                do {
                    try client.openEventStream("/events?sessions=\(id)\(query)", headers: headers)
                    let event = try client.nextEvent(within: .seconds(3))
                    first = "\(event.event ?? "?") \(event.data?.prefix(120) ?? "")"
                } catch {
                    first = "nothing (\(error))"
                }
                return "\(instance.name) \(runs), first event: \(first)"
            }
            return "\(id): \(views)"
        }.joined(separator: "; ")
    }

    /// Every session's own stream and the multiplexed stream must show each session at a newer version too.
    func progress(_ what: String, more: Int = 3, within bound: Duration = .seconds(90)) async throws {
        let ledger = actions.ledger
        let before = ids.map { ledger.count($0, instance: 0) }
        let single = subscribers.newestSingle
        let multiplexed = subscribers.newestMultiplexed
        func streamsMoved() -> Bool {
            let (nowSingle, nowMultiplexed) = (subscribers.newestSingle, subscribers.newestMultiplexed)
            return ids.allSatisfy { id in
                nowSingle[id, default: -1] > single[id, default: -1]
                    && nowMultiplexed[id, default: -1] > multiplexed[id, default: -1]
            }
        }
        do {
            try await eventually(what, within: bound) {
                zip(ids, before).allSatisfy { ledger.count($0, instance: 0) >= $1 + more } && streamsMoved()
            }
        } catch {
            let counts = zip(ids, before).map { "\($0): \($1) → \(ledger.count($0, instance: 0))" }
            let streams = ids.map { id in
                "\(id): \(single[id].map(String.init) ?? "-") → "
                    + "\(subscribers.newestSingle[id].map(String.init) ?? "-")"
                    + ", multiplexed \(multiplexed[id].map(String.init) ?? "-") → "
                    + "\(subscribers.newestMultiplexed[id].map(String.init) ?? "-")"
            }
            let stuck = ids.filter { subscribers.newestMultiplexed[$0, default: -1] <= multiplexed[$0, default: -1] }
            let said = cluster.instances.flatMap { instance in
                instance.log.split(separator: "\n").filter { line in
                    stuck.contains { line.contains(#""session":"\#($0)""#) }
                }
                .map { "\(instance.name): \($0)" }
            }
            throw TestFailure(
                "\(error); stuck in the multiplexed stream: \(stuck), seen from each instance: \(probe(stuck)); "
                    + "acknowledgements per session: \(counts); streams: \(streams); failures: \(actions.failures); "
                    + "streams: \(subscribers.tally); stream violations: \(subscribers.violations.prefix(10)); "
                    + "the instances on the stuck sessions:\n"
                    + "\(said.suffix(60).joined(separator: "\n"))\n\(cluster.logs)"
            )
        }
    }
}

extension ClusterTests {
    /// `error`, saying whether HAProxy saw health checks of running, unpaused instances time out: a
    /// stall seen in this suite before session loads left the HTTP loops (loads waited on JetStream
    /// on the loops, under one lock, so `/healthz` timed out and HAProxy took every instance out).
    static func classify(_ error: any Error, _ load: ClusterLoad) -> any Error {
        let paused = load.paused
        let stalled = load.cluster.proxy.log.split(separator: "\n").contains { line in
            line.contains("Layer7 timeout") && !(paused.map { line.contains("instances/\($0) ") } ?? false)
        }
        let note = stalled ? " (HAProxy saw health checks of live instances time out: an HTTP loop stalled)" : ""
        return TestFailure("\(error)\(note)\n\(load.cluster.logs)")
    }

    /// Runs `body` on a cluster under ``ClusterLoad``, after every session was acknowledged; then stops
    /// the load and checks: no stream went backwards, every stream client resumed, every instance
    /// still runs, and on the instance running each session, ``NATSFailoverTests/verify(_:on:ledger:)``.
    static func underLoad(_ access: ClusterAccess = .open, _ body: (ReactorCluster, ClusterLoad) async throws -> Void)
        async throws
    {
        try await ReactorCluster.with(settings: settings + access.settings) { cluster in
            let load = ClusterLoad(
                cluster: cluster, ids: (0..<12).map { "s\($0)" }, credentials: try ClusterCredentials(access))
            for id in load.ids {
                try load.credentials.created(
                    id, try cluster.createSession(id, headers: load.credentials.creation).answer)
            }
            load.actions.start(load.ids)
            load.subscribers.start(load.ids)
            load.subscribers.startMultiplexed(load.ids)
            do {
                try await load.progress("every session to be acknowledged")
                try await body(cluster, load)
            } catch {
                throw classify(error, load)
            }
            try load.actions.stop()
            try load.subscribers.stop()
            // Failed requests are expected while instances and nodes die; acknowledged ones must all be there.
            print(
                "ClusterTests: requests without acknowledgement: \(load.actions.failures); "
                    + "event streams: \(load.subscribers.tally)"
            )
            let violations = load.subscribers.violations
            // What the instances said of the sessions whose streams went wrong.
            let named = Set(
                violations.compactMap {
                    $0.split(separator: ":").first.map { String($0.split(separator: " ").last ?? "") }
                })
            let said = cluster.instances.flatMap { instance in
                instance.log.split(separator: "\n").filter { line in
                    named.contains { line.contains(#""session":"\#($0)""#) }
                }
                .map { "\(instance.name): \($0)" }
            }
            #expect(
                violations.isEmpty,
                """
                event streams went backwards: \(violations.prefix(20)); \
                the instances' lines on them:\n\(said.suffix(60).joined(separator: "\n"))
                """
            )
            #expect(load.subscribers.tally["streams", default: 0] > load.ids.count, "no event stream was resumed")
            #expect(
                load.subscribers.tally["multiplexed streams", default: 0] > 1,
                "the multiplexed stream was never resumed")
            // In token and jwt mode every request carried its credential: none was refused for it.
            #expect(
                load.actions.failures["401"] == nil && load.actions.failures["403"] == nil, "\(load.actions.failures)")
            // A NATS node's death may let another instance take a session over while records of it are
            // in flight here; they are then lost and what shows them refused, but the instance goes on.
            for instance in cluster.instances where !instance.isRunning {
                let ended = try await instance.stop(signal: SIGKILL)
                Issue.record(
                    """
                    instance \(instance.name) stopped by itself (\(ended.map(\.description) ?? "?")): \
                    \(instance.log.suffix(4000))
                    """
                )
            }
            // On the instance that runs each session (through HAProxy, admin routes would be forwarded
            // to it from whichever instance they reach).
            for id in load.ids {
                var owner: ClusterInstance?
                try await eventually("\(id) to be served through HAProxy", within: .seconds(60)) {
                    let answer = try cluster.proxy.client().request(
                        "GET", "/sessions/\(id)", headers: load.credentials.headers(id))
                    owner = cluster.servedBy(answer)
                    return answer.status == 200
                }
                let process = try #require(owner?.process)
                try await NATSFailoverTests.verify(
                    [id], on: process, ledger: load.actions.ledger, headers: load.credentials.headers)
            }
        }
    }
}
