import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The deployment of the README's "Running several instances" on loopback: a 3-node NATS JetStream
/// cluster, `reactor-server` instances on it (`storage.backend=nats`, replicas 3) and HAProxy in front
/// from the shipped `Config/cluster/haproxy.cfg`. Every port comes from
/// ``NATSServerProcess/freePort()``; every wait is bounded.
///
/// ```swift
/// try await ReactorCluster.with { cluster in
///     let owner = try cluster.createSession("c")                            // where /sessions/c hashes
///     let answer = try cluster.proxy.client().request("GET", "/sessions/c")  // X-Served-By: owner.name
///     try await owner.kill()                                               // kill -9 an instance
///     try await cluster.proxy.waitForServer(owner.name, "DOWN")
///     try await cluster.nats.nodes[0].kill()                               // and a NATS node
///     try await cluster.nats.restart(cluster.nats.nodes[0])
///     let fourth = try await cluster.addInstance()                         // started, then added to HAProxy
/// }
/// ```
public final class ReactorCluster: Sendable {
    /// The NATS nodes.
    public let nats: NATSTestCluster
    /// HAProxy in front of the instances.
    public let proxy: HAProxyProcess
    /// What every instance's stream, buckets and subjects are named after (one per cluster, so
    /// clusters of tests running at once never meet).
    public let prefix: String
    /// The `--set` settings every instance gets besides the fixture's own.
    public let settings: [(key: String, value: String)]
    private let members: Mutex<[ClusterInstance]>

    private init(
        nats: NATSTestCluster, proxy: HAProxyProcess, prefix: String, settings: [(key: String, value: String)],
        instances: [ClusterInstance]
    ) {
        self.nats = nats
        self.proxy = proxy
        self.prefix = prefix
        self.settings = settings
        self.members = Mutex(instances)
    }

    /// The instances, in the order they were started or added.
    public var instances: [ClusterInstance] { members.withLock { $0 } }

    /// The instance called `name`.
    public func instance(named name: String) -> ClusterInstance? { instances.first { $0.name == name } }

    /// The instance that answered `response` through the proxy (its `X-Served-By`).
    public func servedBy(_ response: TestResponse) -> ClusterInstance? {
        response.header("X-Served-By").flatMap(instance(named:))
    }

    /// The instance HAProxy sends `/sessions/{id}` to now (the `X-Served-By` of a `GET` through it).
    /// While HAProxy answers itself (502 for a request it cut when it marked its server down, 503
    /// with no server up), its view is changing: it asks again, as a client would, for up to 10 s.
    public func instance(hashing id: String) throws -> ClusterInstance {
        let start = ContinuousClock.now
        while true {
            let answer = try proxy.client().request("GET", "/sessions/\(id)")
            if let instance = servedBy(answer) { return instance }
            guard [502, 503].contains(answer.status), ContinuousClock.now - start < .seconds(10) else {
                throw TestFailure(
                    "GET /sessions/\(id) through HAProxy: \(answer.status) \(answer.text), "
                        + "served by no instance of the cluster\n\(logs)"
                )
            }
            // Not a wait for the event itself: a pause between two looks (HAProxy checks every 0.5 s).
            usleep(50_000)
        }
    }

    /// Creates session `id` of `reactor` on the instance its requests hash to, and returns that
    /// instance. Not through the proxy: `POST /sessions` hashes on `/sessions`, so every session created
    /// through it starts on one instance and is handed off on its first request elsewhere.
    @discardableResult
    public func createSession(_ id: String, reactor: String = "counter") throws -> ClusterInstance {
        try createSession(id, reactor: reactor, headers: []).instance
    }

    /// The same with request headers (a JWT in `jwt` mode), returning the answer too (its `token` in `token` mode).
    public func createSession(_ id: String, reactor: String = "counter", headers: [(String, String)]) throws -> (
        instance: ClusterInstance, answer: TestResponse
    ) {
        let instance = try instance(hashing: id)
        let created = try instance.client().request(
            "POST", "/sessions", headers: headers, body: #"{"reactor":"\#(reactor)","id":"\#(id)"}"#)
        guard created.status == 201 else {
            throw TestFailure("creating \(id) on \(instance.name) answered \(created.status) \(created.text)")
        }
        return (instance, created)
    }

    /// A new session id (`<stem>0`, `<stem>1`…) whose requests hash to `instance`; fails after 200 tries.
    public func sessionID(_ stem: String, hashingTo instance: ClusterInstance) throws -> String {
        for index in 0..<200 where try self.instance(hashing: "\(stem)\(index)") === instance {
            return "\(stem)\(index)"
        }
        throw TestFailure("none of 200 session ids hashed to \(instance.name)")
    }

    /// Whether every test of a cluster can run here.
    public static let canRun = NATSServerProcess.canRun && HAProxyProcess.canRun

    /// Starts a 3-node NATS cluster (waiting for its meta leader), `count` instances `i1`… on it and
    /// HAProxy in front. `settings` are added to every instance's; `servers(index)`, when given, is
    /// the `storage.nats.servers` of instance `index` instead of every node's URL; `routing` goes into
    /// each NATS node's `cluster` block (see ``NATSTestCluster/start(size:name:routing:)``).
    public static func start(
        instances count: Int = 3, settings: [(key: String, value: String)] = [],
        servers: ((Int, NATSTestCluster) -> String)? = nil, routing: String = ""
    ) async throws -> ReactorCluster {
        let nats = try await NATSTestCluster.start(routing: routing)
        do {
            try await nats.waitUntilJetStreamAnswers()
            let prefix = "c" + String(UUID().uuidString.prefix(8)).lowercased()
            var instances: [ClusterInstance] = []
            for index in 0..<count {
                let urls = servers?(index, nats) ?? nats.urls
                instances.append(try member(index: index, servers: urls, prefix: prefix, settings: settings))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for instance in instances { group.addTask { try await instance.start() } }
                try await group.waitForAll()
            }
            let proxy: HAProxyProcess
            do {
                proxy = try await HAProxyProcess.start(servers: instances.map { ($0.name, $0.port) })
            } catch {
                for instance in instances { _ = try? await instance.stop(signal: SIGKILL) }
                throw error
            }
            let cluster = ReactorCluster(
                nats: nats, proxy: proxy, prefix: prefix, settings: settings, instances: instances)
            do {
                for instance in instances { try await proxy.waitForServer(instance.name, "UP") }
            } catch {
                await cluster.shutdown()
                throw error
            }
            return cluster
        } catch {
            await nats.shutdown()
            throw error
        }
    }

    /// Instance `i<index + 1>` on a free port, not started: the README's command line (backend and
    /// servers from the environment, as in a container), plus the test's settings.
    private static func member(index: Int, servers: String, prefix: String, settings: [(key: String, value: String)])
        throws -> ClusterInstance
    {
        let name = "i\(index + 1)"
        let own: [(key: String, value: String)] = [
            ("storage.nats.prefix", prefix), ("storage.nats.instance", name), ("storage.nats.replicas", "3"),
            // Long enough that a heartbeat late on a busy machine does not move sessions (see NATSFailoverTests).
            ("storage.nats.claimTTLSeconds", "3"), ("storage.nats.timeoutSeconds", "2"),
            ("storage.nats.startTimeoutSeconds", "60"),
            // HAProxy is the proxy whose X-Forwarded-For names the client.
            ("limits.trustedProxies", "127.0.0.1"),
        ]
        let arguments = (own + settings).flatMap { ["--set", "\($0.key)=\($0.value)"] }
        let environment = [
            "REACTOR_STORAGE_BACKEND": "nats", "REACTOR_STORAGE_NATS_SERVERS": servers,
            "REACTOR_ADMIN_TOKEN": TestServer.adminToken,
        ]
        return ClusterInstance(
            name: name, port: try NATSServerProcess.freePort(), arguments: arguments, environment: environment)
    }

    /// Starts one more instance on every NATS node, adds it to HAProxy through the runtime API (no
    /// reload: open streams stay) and waits until its health check passed; sessions whose `/sessions/{id}`
    /// now hashes to it go to it from then on.
    public func addInstance() async throws -> ClusterInstance {
        let index = members.withLock { $0.count }
        let instance = try Self.member(index: index, servers: nats.urls, prefix: prefix, settings: settings)
        try await instance.start()
        members.withLock { $0.append(instance) }
        try await proxy.addServer(instance.name, port: instance.port)
        return instance
    }

    /// Every instance's log and the proxy's, ends only, for failure messages.
    public var logs: String {
        (instances.map { "instance \($0.name):\n\($0.log.suffix(4000))" } + ["haproxy:\n\(proxy.log.suffix(2000))"])
            .joined(separator: "\n")
    }

    /// Kills every process it started and removes their folders.
    public func shutdown() async {
        await proxy.shutdown()
        for instance in instances {
            instance.resume()
            _ = try? await instance.stop(signal: SIGKILL)
        }
        await nats.shutdown()
    }

    /// Runs `body` with a started cluster (see ``start(instances:settings:servers:routing:)``), then
    /// shuts it down, whether `body` succeeded or not.
    public static func with(
        instances count: Int = 3, settings: [(key: String, value: String)] = [],
        servers: ((Int, NATSTestCluster) -> String)? = nil, routing: String = "",
        _ body: (ReactorCluster) async throws -> Void
    ) async throws {
        let cluster = try await start(instances: count, settings: settings, servers: servers, routing: routing)
        do {
            try await body(cluster)
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }
}
