import Examples
import Foundation
import Logs
import Reactors
import ReactorsTesting
import SessionService

/// A `ReactorServer` on 127.0.0.1:0 with the example reactors, a manual service clock, a manual
/// reactor clock for `fruit`, and a known admin token.
final class TestServer {
    static let adminToken = "test-admin-token-0123456789"
    let server: ReactorServer
    let port: Int
    let clock = ManualServiceClock()
    let reactorClock: TestClock
    let logs = RecordingLogHandler()

    init(configure: (inout ServerConfiguration) -> Void = { _ in }, catalog extra: (inout ReactorCatalog) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.http.port = 0
        configuration.http.loops = 2
        configuration.admin.token = Self.adminToken
        configuration.sse.keepAliveSeconds = 3600
        // Tests that persist choose a temporary data directory themselves.
        configuration.storage.memoryOnly = true
        configure(&configuration)
        let reactorClock = TestClock()
        self.reactorClock = reactorClock
        var catalog = ReactorCatalog()
        catalog.register(CounterReactor.name, summary: CounterReactor.summary, exampleActions: CounterReactor.exampleActions) { CounterReactor() }
        catalog.register(FruitReactor.name, summary: FruitReactor.summary, exampleActions: FruitReactor.exampleActions) { FruitReactor(clock: reactorClock) }
        catalog.register(TodoReactor.name, summary: TodoReactor.summary, exampleActions: TodoReactor.exampleActions) { TodoReactor() }
        extra(&catalog)
        server = try ReactorServer(catalog: catalog, configuration: configuration, clock: clock, logger: Logger(label: "test", level: .debug, handler: logs))
        let address = try server.start()
        port = address.port
    }

    deinit {
        server.shutdown()
        server.waitUntilStopped()
    }

    func connect() throws -> TestConnection { try TestConnection(port: port) }

    /// One request on a fresh connection.
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil, json: Bool = true) throws -> TestResponse {
        try connect().request(method, path, headers: headers, body: body, json: json)
    }

    var admin: [(String, String)] { [("Authorization", "Bearer \(Self.adminToken)")] }

    /// Creates a session and returns its id.
    func createSession(_ reactor: String, id: String? = nil) throws -> String {
        let body = id.map { #"{"reactor":"\#(reactor)","id":"\#($0)"}"# } ?? #"{"reactor":"\#(reactor)"}"#
        let response = try request("POST", "/sessions", body: body)
        guard response.status == 201, let id = try response.json()["id"] as? String else {
            throw TestConnection.Failure(description: "create session: \(response.status) \(response.text)")
        }
        return id
    }
}
