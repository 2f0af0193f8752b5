import Examples
import Foundation
import HostedExamples
import Logs
import Reactors
import SessionService
import Synchronization
import Testing

/// A `ReactorServer` live on 127.0.0.1:0 inside the test process: the example reactors (counter, fruit,
/// todo, and search given its upstream; ``ExampleCatalog``) plus those the test registers, one
/// ``InjectedClock`` for every timer (reactors, service, HTTP), a known admin token, memory-only storage
/// unless `dataDirectory` is given, and its log records in ``logs``. Released, it shuts down (bounded) and
/// closes its journal, so a test can start another on the same data directory (a restart).
///
/// ```swift
/// let server = try TestServer { $0.sessions.idleTTLSeconds = 60 }
/// let id = try server.createSession("counter")
/// let response = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
/// #expect(try response.json()["version"] as? Int == 1)
/// let stream = try server.subscribe("/sessions/\(id)/events")
/// #expect(try stream.nextEvent().id == "1")
/// ```
public final class TestServer: Sendable {
    /// The admin bearer token every test server uses.
    public static let adminToken = "test-admin-token-0123456789"
    /// The server under test (its service, store and storage, for white-box checks).
    public let server: ReactorServer
    /// The port it listens on.
    public let port: Int
    /// The one clock of this server (and of its fruit reactors).
    public let clock: InjectedClock
    /// Everything it logged (level debug and up).
    public let logs = Recorder<LogRecord>()
    private let stopped = Atomic<Bool>(false)

    /// Starts a server. `configure` edits the configuration (memory-only unless `dataDirectory`, keep-alive
    /// 1 h, shutdown deadline 0 so release never waits on the injected clock); `catalog` adds reactors;
    /// `search` hosts the search example on that upstream.
    public init(
        dataDirectory: String? = nil, clock: InjectedClock = InjectedClock(),
        configure: (inout ServerConfiguration) throws -> Void = { _ in },
        catalog extra: (inout ReactorCatalog) -> Void = { _ in }, search: SearchReactor.Fetch? = nil
    ) throws {
        var configuration = ServerConfiguration()
        configuration.http.port = 0
        configuration.http.loops = 2
        configuration.admin.token = Self.adminToken
        configuration.sse.keepAliveSeconds = 3600
        configuration.http.shutdownDeadlineSeconds = 0
        configuration.storage.memoryOnly = dataDirectory == nil
        if let dataDirectory { configuration.storage.dataDir = dataDirectory }
        try configure(&configuration)
        self.clock = clock
        var catalog = ReactorCatalog()
        ExampleCatalog.register(in: &catalog, clock: clock.reactorClock, search: search)
        extra(&catalog)
        // With storage, a restart follows a stop that closed the data directory's LOCK, but a child that another test
        // is starting at that moment holds a copy of every descriptor of this process, the lock's
        // among them, until it runs its close-from action or exec (seen once in a few full runs: this
        // process named as the lock's owner in /proc/locks, no descriptor of its own left on it).
        // Every child starts on the spawner thread, whose posix_spawn returns only after the child's
        // exec: once the spawns already begun are over, no child holds the lock.
        if !configuration.storage.memoryOnly { SpawnThread.shared.finishSpawnsBegun() }
        server = try ReactorServer(
            catalog: catalog, configuration: configuration, clock: clock,
            logger: Logger(label: "test", level: .debug, handler: logs))
        port = try server.start().port
    }

    /// Starts a server whose sessions are stored at `place` (a ``TestStorage``'s); `configure` edits the
    /// configuration after the place is set.
    public convenience init(
        storage place: StoragePlace, clock: InjectedClock = InjectedClock(),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        catalog extra: (inout ReactorCatalog) -> Void = { _ in }
    ) throws {
        try self.init(
            clock: clock,
            configure: { configuration in
                try place.configure(&configuration)
                configure(&configuration)
            }, catalog: extra)
    }

    deinit { stop() }

    /// Shuts the server down and waits until it has stopped and closed its journal (also on release);
    /// records an issue if that takes longer than the default bound.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        server.shutdown()
        let done = DispatchSemaphore(value: 0)
        let server = server
        Thread.detachNewThread {
            server.waitUntilStopped()
            done.signal()
        }
        let seconds = Double(defaultBound.components.seconds)
        if done.wait(timeout: .now() + seconds) == .timedOut {
            Issue.record("the test server did not stop within \(defaultBound.spoken) of shutdown()")
        }
    }

    /// A new connection to it.
    public func connect(readTimeout: Duration = defaultBound, receiveBuffer: Int32? = nil) throws -> TestClient {
        try TestClient(port: port, readTimeout: readTimeout, receiveBuffer: receiveBuffer)
    }

    /// One request on a fresh connection.
    public func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil, json: Bool = true
    ) throws -> TestResponse {
        try connect().request(method, path, headers: headers, body: body, json: json)
    }

    /// A fresh connection with an event stream open on `path` (its response head read).
    public func subscribe(_ path: String, headers: [(String, String)] = [], receiveBuffer: Int32? = nil) throws
        -> TestClient
    {
        let connection = try connect(receiveBuffer: receiveBuffer)
        try connection.openEventStream(path, headers: headers)
        return connection
    }

    /// The `Authorization` header of the admin routes.
    public var admin: [(String, String)] { [("Authorization", "Bearer \(Self.adminToken)")] }

    /// Creates a session of `reactor` (with `id` if given) and returns its id.
    @discardableResult
    public func createSession(_ reactor: String, id: String? = nil) throws -> String {
        let body = id.map { #"{"reactor":"\#(reactor)","id":"\#($0)"}"# } ?? #"{"reactor":"\#(reactor)"}"#
        let response = try request("POST", "/sessions", body: body)
        guard response.status == 201, let id = try response.json()["id"] as? String else {
            throw TestFailure("creating a \(reactor) session answered \(response.status) \(response.text)")
        }
        return id
    }

    /// The `GET /admin/sessions` entry of session `id` (nil when not listed).
    public func adminEntry(_ id: String) throws -> [String: Any]? {
        let listing = try request("GET", "/admin/sessions", headers: admin).json()
        return (listing["sessions"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }
}
