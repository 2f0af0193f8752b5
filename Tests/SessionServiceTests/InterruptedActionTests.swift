import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An action accepted before `kill -9` whose effect had not finished is marked interrupted, never re-run,
/// and stays marked through later snapshots and restarts.
@Suite struct InterruptedActionTests {
    static let token = "interrupted-admin-token"
    static var admin: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    static func start(_ directory: String) throws -> ServerProcess {
        try ServerProcess(arguments: ["--data-dir", directory, "--set", "storage.snapshotEvery=1"], environment: ["REACTOR_ADMIN_TOKEN": token])
    }

    static func actions(_ connection: TestConnection) throws -> [[String: Any]] {
        try connection.request("GET", "/admin/sessions/basket/actions", headers: admin).json()["actions"] as? [[String: Any]] ?? []
    }

    @Test func anActionCutShortByKill9IsMarkedInterrupted() throws {
        let directory = NSTemporaryDirectory() + "interrupted-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try Self.start(directory)
        var connection = try TestConnection(port: server.port)
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"fruit","id":"basket"}"#).status == 201)
        let stream = try TestConnection(port: server.port)
        try stream.write("GET /sessions/basket/events HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try stream.nextEvent()
        #expect(try connection.request("POST", "/sessions/basket/actions", body: #"{"type":"apple"}"#).json()["seq"] as? Int == 1)
        // The loading state is shown at once; the fruit's name would follow 500 ms later.
        let loading = try stream.nextEvent()
        #expect(loading.id == "1")
        #expect(server.stop(signal: SIGKILL) == SIGKILL)

        server = try Self.start(directory)
        connection = try TestConnection(port: server.port)
        let recovered = try connection.request("GET", "/sessions/basket").json()
        #expect(recovered["version"] as? Int == 1, "the interrupted effect must not be re-run")
        var log = try Self.actions(connection)
        #expect(log.count == 1)
        #expect(log.first?["interrupted"] as? Bool == true)

        // A later action completes normally and writes snapshots (snapshotEvery=1); the mark stays.
        let done = try connection.request("POST", "/sessions/basket/actions?wait=true", body: #"{"type":"banana"}"#)
        #expect(done.status == 200)
        #expect(server.stop() == 0)
        server = try Self.start(directory)
        connection = try TestConnection(port: server.port)
        log = try Self.actions(connection)
        #expect(log.map { $0["seq"] as? Int } == [1, 2])
        #expect(log.map { $0["interrupted"] as? Bool ?? false } == [true, false])
        #expect(server.stop() == 0)
    }
}
