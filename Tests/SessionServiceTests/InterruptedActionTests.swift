import Foundation
import HTTPServer
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An action accepted before `kill -9` whose effect had not finished is marked interrupted, never re-run,
/// and stays marked through later snapshots and restarts; the reactor is told once, at the next load, and
/// puts its state right (the search example ends its spinner).
@Suite(.offThePool) struct InterruptedActionTests {
    static let token = "interrupted-admin-token"
    static var admin: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A `reactor-server` whose `search` reactor asks `upstream` (which the test holds), a snapshot per mutation.
    static func start(_ place: StoragePlace, upstream: SocketAddress) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: place.arguments + [
                "--set", "storage.snapshotEvery=1",
                "--set", "search.baseURL=http://127.0.0.1:\(upstream.port)", "--set", "search.timeoutSeconds=600",
            ],
            environment: ["REACTOR_ADMIN_TOKEN": token])
    }

    static func actions(_ connection: TestClient) throws -> [[String: Any]] {
        try connection.request("GET", "/admin/sessions/finder/actions", headers: admin).json()["actions"]
            as? [[String: Any]] ?? []
    }

    @Test(arguments: TestStorage.all)
    func anActionCutShortByKill9IsMarkedInterrupted(storage: TestStorage) async throws {
        // The search effect waits on this upstream, which never answers: the effect is in flight for as
        // long as the test wants, with no real delay to race.
        let upstream = HoldingResponder()
        try await withHTTPServer(upstream) { _, address in
            try await storage.withPlace("interrupted") { place in
                var server = try await Self.start(place, upstream: address)
                var connection = try server.client()
                #expect(
                    try connection.request("POST", "/sessions", body: #"{"reactor":"search","id":"finder"}"#).status
                        == 201)
                #expect(
                    try connection.request(
                        "POST", "/sessions/finder/actions", body: #"{"type":"updateQuery","query":"swift"}"#
                    ).json()["seq"] as? Int == 1)
                // The query and the spinner are reduced (and journaled) before the effect asks upstream.
                try await upstream.requests.next("the search to reach the upstream") { $0.query("q") == "swift" }
                #expect(try connection.request("GET", "/sessions/finder").json()["version"] as? Int == 2)
                #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

                server = try await Self.start(place, upstream: address)
                connection = try server.client()
                // The reactor was told (recover(interrupted:state:)): one mutation ends the spinner and says why.
                let recovered = try connection.request("GET", "/sessions/finder").json()
                #expect(recovered["version"] as? Int == 3)
                let state = recovered["state"] as? [String: Any]
                #expect(state?["isLoading"] as? Bool == false)
                #expect((state?["error"] as? String)?.contains("cut off") == true, "\(recovered)")
                #expect(state?["query"] as? String == "swift")
                // Killed again at once: the recovery is stored and never runs twice.
                #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))
                server = try await Self.start(place, upstream: address)
                connection = try server.client()
                #expect(try connection.request("GET", "/sessions/finder").json()["version"] as? Int == 3)
                var log = try Self.actions(connection)
                #expect(log.count == 1)
                #expect(log.first?["interrupted"] as? Bool == true)

                // A later action completes normally and writes snapshots (snapshotEvery=1); the mark stays.
                let done = try connection.request(
                    "POST", "/sessions/finder/actions?wait=true", body: #"{"type":"updateQuery","query":""}"#)
                #expect(done.status == 200)
                #expect(try await server.stop() == .exited(0))
                server = try await Self.start(place, upstream: address)
                connection = try server.client()
                let after = try connection.request("GET", "/sessions/finder").json()
                #expect(
                    after["version"] as? Int == 5 && (after["state"] as? [String: Any])?["error"] == nil, "\(after)")
                log = try Self.actions(connection)
                #expect(log.map { $0["seq"] as? Int } == [1, 2])
                #expect(log.map { $0["interrupted"] as? Bool ?? false } == [true, false])
                #expect(try await server.stop() == .exited(0))
                // Never re-run: the upstream was asked once, before the kill.
                #expect(upstream.requests.values.map { $0.query("q") } == ["swift"])
                upstream.answerAll(status: 503)
            }
        }
    }
}
