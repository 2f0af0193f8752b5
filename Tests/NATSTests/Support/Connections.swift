import NATS
import ReactorServerTesting

/// A connection to `servers` (comma-separated URLs), connected before it is returned. Requests
/// wait up to 30 s by default: the machines that run the tests may be heavily loaded, and only the
/// tests about timeouts give short ones.
func connect(_ servers: String, _ configure: (inout NATSOptions) -> Void = { _ in }) async throws -> NATSConnection {
    var options = try NATSOptions(servers: servers)
    options.name = "nats-tests"
    options.requestTimeout = .seconds(30)
    configure(&options)
    let connection = NATSConnection(options: options)
    try await connection.connect(timeout: .seconds(10))
    return connection
}

/// A JetStream server, a connection and a context; `body` runs with them, then all is torn down.
func withJetStream(_ body: (JetStream, NATSServerProcess) async throws -> Void) async throws {
    let server = try await NATSServerProcess.start()
    let connection = try await connect(server.url)
    do {
        try await body(JetStream(connection: connection, timeout: .seconds(30)), server)
    } catch {
        connection.close()
        await server.shutdown()
        throw error
    }
    connection.close()
    await server.shutdown()
}

/// Records `connection`'s status changes from now on.
func statusRecorder(_ connection: NATSConnection) -> Recorder<NATSConnection.Status> {
    let recorder = Recorder<NATSConnection.Status>()
    connection.observeStatus { recorder.record($0) }
    return recorder
}

extension Recorder where Value == NATSConnection.Status {
    /// Waits for a `connected` status after `index` changes; returns the server.
    @discardableResult
    func waitForConnected(after index: Int = 0, timeout: Duration = .seconds(15)) async throws -> String {
        let values = try await waitUntil("connected", within: timeout) { values in
            values.dropFirst(index).contains { if case .connected = $0 { true } else { false } }
        }
        for case .connected(let server) in values.dropFirst(index) { return server }
        return ""
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}
