import Foundation
import NATS
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One `nats-server` (single node, JetStream) for every test of the run that stores sessions on
/// NATS: started at first use, killed when the test process exits. Tests keep apart by prefix.
public enum SharedNATSServer {
    private static let starting = Mutex<Task<NATSServerProcess, any Error>?>(nil)
    private static let pid = Atomic<Int32>(0)

    /// The server, started if needed. Without the binary: skips the calling test (the reason given),
    /// or, with `CI` set, fails it with how to install it.
    public static func server() async throws -> NATSServerProcess {
        guard NATSServerProcess.binary != nil else {
            if ProcessInfo.processInfo.environment["CI"] != nil { throw TestFailure(NATSServerProcess.missing) }
            try Test.cancel(Comment(rawValue: NATSServerProcess.missing))
        }
        let task = starting.withLock { task -> Task<NATSServerProcess, any Error> in
            if let task { return task }
            let started = Task {
                let server = try await NATSServerProcess.start(name: "shared")
                pid.store(server.pid, ordering: .relaxed)
                atexit {
                    let running = SharedNATSServer.pid.load(ordering: .relaxed)
                    if running > 0 { kill(running, SIGKILL) }
                }
                return server
            }
            task = started
            return started
        }
        return try await task.value
    }

    /// Deletes the stream and buckets of the place with `prefix`.
    public static func remove(prefix: String, from url: String) async {
        guard let options = try? NATSOptions(servers: url) else { return }
        let connection = NATSConnection(options: options)
        defer { connection.close() }
        guard (try? await connection.connect(timeout: .seconds(10))) != nil else { return }
        let js = JetStream(connection: connection, timeout: .seconds(30))
        let buckets = ["sessions", "claims", "instances", "crashes"].map { "KV_\(prefix)-\($0)" }
        for stream in ["\(prefix)-records"] + buckets {
            _ = try? await js.deleteStream(stream)
        }
    }
}
