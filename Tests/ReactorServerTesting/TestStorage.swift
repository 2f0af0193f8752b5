import Foundation
import SessionService
import Testing

/// A storage backend the durability tests run against. A test of what storage promises (versions and
/// seqs that continue, action logs, stub mode, pulses, passivation, tokens, time travel, restarts,
/// `kill -9`) takes one as its argument and asks it for a fresh, empty place for its sessions, so
/// every backend passes the same test; tests of one backend's own machinery (the file journal's
/// segments, compaction, erasure) stay with that backend.
///
/// ```swift
/// @Test(arguments: TestStorage.all)
/// func versionsSurviveARestart(storage: TestStorage) async throws {
///     try await storage.withPlace("restart") { place in
///         do {
///             let server = try TestServer(storage: place)
///             _ = try server.createSession("counter", id: "kept")
///         }
///         let server = try TestServer(storage: place)   // the same place: a restart
///         #expect(try server.request("GET", "/sessions/kept").status == 200)
///     }
/// }
/// ```
public struct TestStorage: Sendable, CustomTestStringConvertible {
    /// The backend's name, with any variant's settings: `file`, `file (storage.fsync=always)`.
    public let name: String
    /// Makes a fresh place for one test's sessions, and what removes it afterwards.
    private let makePlace: @Sendable (String) async throws -> (place: StoragePlace, remove: @Sendable () async -> Void)

    /// A backend whose places `makePlace` makes (given a label for names and folders) and removes.
    public init(
        name: String,
        makePlace:
            @escaping @Sendable (String) async throws -> (place: StoragePlace, remove: @Sendable () async -> Void)
    ) {
        self.name = name
        self.makePlace = makePlace
    }

    public var testDescription: String { name }

    /// The file journal in a fresh temporary folder.
    public static let file = TestStorage(name: "file") { label in
        let directory = NSTemporaryDirectory() + label + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let place = StoragePlace(directory: directory, settings: [("storage.dataDir", directory)])
        return (place, { try? FileManager.default.removeItem(atPath: directory) })
    }

    /// The NATS JetStream backend on one `nats-server` shared by the whole test run (started at
    /// first use, single node, JetStream in a temporary folder), each place under a prefix of its own
    /// (its stream and buckets are deleted afterwards), with a local data folder of its own as an
    /// instance's disk (where its crash records wait to reach JetStream). Without the server installed
    /// the test is skipped, saying so, or fails with how to install it when `CI` is set.
    public static let nats = TestStorage(name: "nats") { label in
        let server = try await SharedNATSServer.server()
        let prefix = "t" + String(UUID().uuidString.prefix(8)).lowercased()
        let local = NSTemporaryDirectory() + label + "-" + prefix
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        let place = StoragePlace(
            directory: nil,
            settings: [
                ("storage.backend", "nats"), ("storage.nats.servers", server.url), ("storage.nats.prefix", prefix),
                ("storage.nats.replicas", "1"),
                ("storage.nats.startTimeoutSeconds", "60"),
                // One name for every server started on the place, as a deployment keeps an instance's name
                // across restarts: a server restarted after kill -9 takes its sessions back at once.
                ("storage.nats.instance", prefix),
                ("storage.dataDir", local),
            ])
        return (
            place,
            {
                await SharedNATSServer.remove(prefix: prefix, from: server.url)
                try? FileManager.default.removeItem(atPath: local)
            }
        )
    }

    /// Every backend the server has: the arguments of each durability test.
    public static let all: [TestStorage] = [.file, .nats]

    /// The same backend with one more setting: a variant a test also runs against.
    public func with(_ key: String, _ value: String) -> TestStorage {
        let make = makePlace
        return TestStorage(
            name: name.hasSuffix(")") ? "\(name.dropLast()), \(key)=\(value))" : "\(name) (\(key)=\(value))"
        ) { label in
            let (place, remove) = try await make(label)
            return (StoragePlace(directory: place.directory, settings: place.settings + [(key, value)]), remove)
        }
    }

    /// Runs `body` with a fresh, empty place for sessions, removed afterwards however `body` ends.
    public func withPlace<T>(_ label: String, _ body: (StoragePlace) async throws -> T) async throws -> T {
        let (place, remove) = try await makePlace(label)
        do {
            let result = try await body(place)
            await remove()
            return result
        } catch {
            await remove()
            throw error
        }
    }
}

/// Where one test's sessions are stored, and how to point a server at it: in process
/// (``TestServer/init(storage:clock:configure:catalog:)``) or as a process (``arguments``).
public struct StoragePlace: Sendable {
    /// The file journal's folder; nil for other backends (only file-only tests look inside).
    public let directory: String?
    /// The settings (keys of `ServerConfiguration`, as `--set` takes them) that point a server here.
    public let settings: [(key: String, value: String)]

    /// A place made of `settings`, with the file journal's `directory` when it is one.
    public init(directory: String?, settings: [(key: String, value: String)]) {
        self.directory = directory
        self.settings = settings
    }

    /// Points `configuration` at this place (storage on, the place's settings).
    public func configure(_ configuration: inout ServerConfiguration) throws {
        configuration.storage.memoryOnly = false
        for (key, value) in settings {
            guard let setting = ConfigurationSchema.server.setting(key) else { throw TestFailure("no setting \(key)") }
            try setting.apply(text: value, from: "the test's storage place", to: &configuration)
        }
    }

    /// The local data folder (`storage.dataDir`): the file journal's, or an instance's own disk on NATS.
    public var dataDirectory: String? {
        settings.last { $0.key == "storage.dataDir" }?.value
    }

    /// The command-line arguments that point a `reactor-server` process here.
    public var arguments: [String] {
        settings.flatMap { ["--set", "\($0.key)=\($0.value)"] }
    }
}
