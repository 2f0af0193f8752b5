import Foundation
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The load of the cluster tests: sessions s0…s11, each created on the instance its requests hash to,
/// with actions (``ActionLoad``, `?wait=true` and `202` alternating) and an event-stream client
/// (``ResumingSubscribers``) each, all through HAProxy.
final class ClusterLoad: Sendable {
    let cluster: ReactorCluster
    let ids: [String]
    let actions: ActionLoad
    let subscribers: ResumingSubscribers
    private let pausedName = Mutex<String?>(nil)

    init(cluster: ReactorCluster, ids: [String]) {
        self.cluster = cluster
        self.ids = ids
        actions = ActionLoad(ports: [cluster.proxy.port], alternating: true)
        subscribers = ResumingSubscribers(port: cluster.proxy.port, ledger: actions.ledger)
    }

    /// The instance a test paused on purpose (its health checks time out by design).
    var paused: String? {
        get { pausedName.withLock { $0 } }
        set { pausedName.withLock { $0 = newValue } }
    }

    /// Waits until every session has `more` acknowledgements beyond its count when this was called;
    /// fails with the cluster's logs.
    func progress(_ what: String, more: Int = 3, within bound: Duration = .seconds(90)) async throws {
        let ledger = actions.ledger
        let before = ids.map { ledger.count($0, instance: 0) }
        do {
            try await eventually(what, within: bound) { zip(ids, before).allSatisfy { ledger.count($0, instance: 0) >= $1 + more } }
        } catch {
            let counts = zip(ids, before).map { "\($0): \($1) → \(ledger.count($0, instance: 0))" }
            throw TestFailure("\(error); acknowledgements per session: \(counts); failures: \(actions.failures)\n\(cluster.logs)")
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
    static func underLoad(_ body: (ReactorCluster, ClusterLoad) async throws -> Void) async throws {
        try await ReactorCluster.with(settings: settings) { cluster in
            let load = ClusterLoad(cluster: cluster, ids: (0..<12).map { "s\($0)" })
            for id in load.ids { try cluster.createSession(id) }
            load.actions.start(load.ids)
            load.subscribers.start(load.ids)
            do {
                try await load.progress("every session to be acknowledged")
                try await body(cluster, load)
            } catch {
                throw classify(error, load)
            }
            try load.actions.stop()
            try load.subscribers.stop()
            // Failed requests are expected while instances and nodes die; acknowledged ones must all be there.
            print("ClusterTests: requests without acknowledgement: \(load.actions.failures); event streams: \(load.subscribers.tally)")
            #expect(load.subscribers.violations.isEmpty, "event streams went backwards: \(load.subscribers.violations.prefix(20))")
            #expect(load.subscribers.tally["streams", default: 0] > load.ids.count, "no event stream was resumed")
            // A NATS node's death may let another instance take a session over while records of it are
            // in flight here; they are then lost and what shows them refused, but the instance goes on.
            for instance in cluster.instances where !instance.isRunning {
                let ended = try await instance.stop(signal: SIGKILL)
                Issue.record("instance \(instance.name) stopped by itself (\(ended.map(\.description) ?? "?")): \(instance.log.suffix(4000))")
            }
            // On the instance that runs each session (through HAProxy, admin routes would be forwarded
            // to it from whichever instance they reach).
            for id in load.ids {
                var owner: ClusterInstance?
                try await eventually("\(id) to be served through HAProxy", within: .seconds(60)) {
                    let answer = try cluster.proxy.client().request("GET", "/sessions/\(id)")
                    owner = cluster.servedBy(answer)
                    return answer.status == 200
                }
                let process = try #require(owner?.process)
                try await NATSFailoverTests.verify([id], on: process, ledger: load.actions.ledger)
            }
        }
    }
}
