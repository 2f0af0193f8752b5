import Foundation
import HostedExamples
import Logs
import ReactorClient
import ReactorServerTesting
import ReactorsTesting
import SessionService
import Synchronization

/// A real `ReactorServer` with the example reactors on 127.0.0.1, persisting to its own temporary folder, that
/// can be stopped and started again on the same port over the same data (as a deploy or a crash would).
final class LiveServer: Sendable {
    static let adminToken = "client-tests-admin-token"
    let dataDirectory: String
    let port: Int
    let logs = RecordingLogHandler()
    private let configure: @Sendable (inout ServerConfiguration) -> Void
    private let extra: @Sendable (inout ReactorCatalog) -> Void
    private let running = Mutex<ReactorServer?>(nil)

    /// Starts a server on a free port; `catalog` registers reactors besides the examples.
    init(
        configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
        catalog extra: @escaping @Sendable (inout ReactorCatalog) -> Void = { _ in }
    ) throws {
        dataDirectory = NSTemporaryDirectory() + "reactor-client-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        self.configure = configure
        self.extra = extra
        let server = try Self.makeServer(
            port: 0, dataDirectory: dataDirectory, logs: logs, configure: configure, extra: extra)
        port = Int(try server.start().port)
        running.withLock { $0 = server }
    }

    deinit {
        let server = running.withLock { $0.take() }
        server?.shutdown()
        server?.waitUntilStopped()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A client of this server; `configure` adjusts its configuration.
    func client(bearerToken: String? = nil, _ configure: (inout ReactorClient.Configuration) -> Void = { _ in })
        -> ReactorClient
    {
        var configuration = ReactorClient.Configuration()
        configure(&configuration)
        return ReactorClient(baseURL: baseURL, bearerToken: bearerToken, configuration: configuration)
    }

    /// Shuts the server down gracefully (streams end, the journal is synced) and waits until it has stopped.
    func stop() async throws {
        let server = running.withLock { $0.take() }
        server?.shutdown()
        try await waitFor("the server to stop") { try await offPool { server?.waitUntilStopped() } }
    }

    /// Starts a new server on the same port over the same data folder.
    func start() throws {
        let server = try Self.makeServer(
            port: port, dataDirectory: dataDirectory, logs: logs, configure: configure, extra: extra)
        try server.start()
        running.withLock { $0 = server }
    }

    private static func makeServer(
        port: Int, dataDirectory: String, logs: RecordingLogHandler,
        configure: (inout ServerConfiguration) -> Void,
        extra: (inout ReactorCatalog) -> Void
    ) throws -> ReactorServer {
        var configuration = ServerConfiguration()
        configuration.http.port = port
        configuration.http.loops = 2
        configuration.admin.token = adminToken
        configuration.storage.dataDir = dataDirectory
        // The injected clock never reaches a shutdown deadline: stopping closes what remains at once.
        configuration.http.shutdownDeadlineSeconds = 0
        configure(&configuration)
        var catalog = ReactorCatalog()
        ExampleCatalog.register(in: &catalog, clock: TestClock())
        extra(&catalog)
        return try ReactorServer(
            catalog: catalog, configuration: configuration, clock: InjectedClock(),
            logger: Logger(label: "client-test", level: .debug, handler: logs))
    }
}
