import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One `reactor-server` process of a ``ReactorCluster``: a fixed port (HAProxy's server line names
/// it) and a fixed name (its `storage.nats.instance` and its HAProxy server name), so that it comes
/// back after `kill -9` where the proxy and its claims expect it.
///
/// ```swift
/// let instance = cluster.instances[0]
/// try await instance.kill()                 // SIGKILL, waits for the exit
/// try await instance.start()                // same port, same name: takes its own claims back
/// instance.pause(); instance.resume()       // SIGSTOP / SIGCONT
/// ```
public final class ClusterInstance: Sendable {
    /// `i1`, `i2`…: its HAProxy server name and NATS instance name.
    public let name: String
    /// Its port on 127.0.0.1.
    public let port: Int
    /// Its command line (without `--port`) and added environment.
    public let arguments: [String]
    public let environment: [String: String]
    private let current = Mutex<ServerProcess?>(nil)
    /// What its earlier runs wrote, for failure messages.
    private let earlier = Mutex("")

    init(name: String, port: Int, arguments: [String], environment: [String: String]) {
        self.name = name
        self.port = port
        self.arguments = arguments
        self.environment = environment
    }

    /// The running process, nil while stopped.
    public var process: ServerProcess? { current.withLock { $0 } }
    /// Whether it runs (a paused one does).
    public var isRunning: Bool { process?.process.isRunning ?? false }
    /// Everything it wrote to standard error, over its restarts.
    public var log: String { earlier.withLock { $0 } + (process?.standardError ?? "") }

    /// Starts it (again) on its port and waits, bounded, until it listens. It listens once its
    /// storage is set up, which waits (logging) while JetStream elects a leader.
    public func start(within bound: Duration = .seconds(90)) async throws {
        if let running = process, running.process.isRunning { throw TestFailure("instance \(name) is already running") }
        let started = try await ServerProcess.start(
            arguments: arguments + ["--port", "\(port)"], environment: environment, within: bound)
        current.withLock { $0 = started }
    }

    /// Sends `signal` and waits, bounded, for it to end (a paused one is resumed first, so SIGTERM
    /// reaches it).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, within bound: Duration = defaultBound) async throws -> TestProcess
        .Termination?
    {
        guard let running = process else { return nil }
        if signal != SIGKILL { running.process.signal(SIGCONT) }
        let termination = try await running.stop(signal: signal, within: bound)
        current.withLock { $0 = nil }
        earlier.withLock { $0 += running.standardError }
        return termination
    }

    /// `kill -9`: it dies without a goodbye, as in a crash.
    public func kill() async throws {
        let termination = try await stop(signal: SIGKILL)
        guard termination == .signalled(SIGKILL) else {
            throw TestFailure(
                "instance \(name) ended with \(termination.map(\.description) ?? "nothing") instead of SIGKILL")
        }
    }

    /// SIGSTOP: it keeps its sockets and answers nothing, its heartbeat included.
    public func pause() { process?.process.signal(SIGSTOP) }

    /// SIGCONT after ``pause()``.
    public func resume() { process?.process.signal(SIGCONT) }

    /// A new connection straight to it, past the proxy.
    public func client(readTimeout: Duration = defaultBound) throws -> TestClient {
        try TestClient(port: port, readTimeout: readTimeout)
    }
}
