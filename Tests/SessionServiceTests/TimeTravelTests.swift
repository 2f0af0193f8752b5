import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// `GET /admin/sessions/{id}/versions/{v}` rebuilds exactly what subscribers were shown at version v;
/// fork starts a new session there. With every backend, except how compaction drops old versions.
@Suite(.offThePool) struct TimeTravelTests {
    /// Drives a counter through increases and decreases, recording each state an SSE subscriber saw.
    static func history(_ server: TestServer, _ id: String, steps: Int) throws -> [Int: Int] {
        _ = try server.createSession("counter", id: id)
        let stream = try server.subscribe("/sessions/\(id)/events")
        var seen: [Int: Int] = [:]
        let client = try server.connect()
        for step in 0...steps {
            let event = try stream.nextEvent()
            let version = try #require(event.id.flatMap(Int.init))
            seen[version] = try #require((try event.json() as? [String: Any])?["value"] as? Int)
            guard step < steps else { break }
            // Two up, one down: values differ from versions, so a wrong replay shows.
            let action = step % 3 == 2 ? "decrease" : "increase"
            #expect(
                try client.request("POST", "/sessions/\(id)/actions", body: #"{"type":"\#(action)"}"#).status == 202)
        }
        return seen
    }

    static func state(_ server: TestServer, _ id: String, at version: Int) throws -> TestResponse {
        try server.request("GET", "/admin/sessions/\(id)/versions/\(version)", headers: server.admin)
    }

    @Test(arguments: TestStorage.all)
    func aPastVersionIsWhatSubscribersSawThen(storage: TestStorage) async throws {
        try await storage.withPlace("timetravel") { place in
            let server = try TestServer(storage: place) { $0.storage.snapshotEvery = 7 }
            let seen = try Self.history(server, "past", steps: 30)
            #expect(seen.count == 31)
            for (version, value) in seen.sorted(by: { $0.key < $1.key }) {
                let response = try Self.state(server, "past", at: version)
                #expect(response.status == 200)
                #expect(
                    (try response.json()["state"] as? [String: Any])?["value"] as? Int == value, "version \(version)")
            }
            let future = try Self.state(server, "past", at: 31)
            #expect(future.status == 404)
            #expect(future.errorCode == "unknown_version")
            #expect(try Self.state(server, "nobody", at: 0).status == 404)
            #expect(try Self.state(server, "past", at: 1).errorCode == nil)
            #expect(try server.request("GET", "/admin/sessions/past/versions/1").status == 401)
        }
    }

    /// On NATS, history reaches back to the session's latest trim, which `storage.nats.trimAfterMessages` sets.
    @Test(.enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
    func onNATSTimeTravelReachesBackToTheLatestTrim() async throws {
        for trimAfter in [64, 100_000] {
            try await TestStorage.nats.withPlace("trim") { place in
                let server = try TestServer(storage: place) { $0.storage.nats.trimAfterMessages = trimAfter }
                _ = try server.createSession("counter", id: "long")
                for _ in 0..<120 {
                    #expect(
                        try server.request("POST", "/sessions/long/actions?wait=true", body: #"{"type":"increase"}"#)
                            .status == 200)
                }
                // Upkeep (every 5 s of the server's clock) trims a subject past the threshold behind a checkpoint.
                await server.clock.advance(by: .seconds(6))
                if trimAfter == 64 {
                    try await eventually("version 1 to be trimmed away") {
                        try Self.state(server, "long", at: 1).status == 410
                    }
                } else {
                    await server.clock.advance(by: .seconds(6))
                    #expect(
                        try Self.state(server, "long", at: 1).status == 200, "kept with trimAfterMessages=\(trimAfter)")
                }
                let latest = try Self.state(server, "long", at: 120)
                #expect(
                    latest.status == 200 && (latest.text.contains(#""value":120"#)), "\(latest.status) \(latest.text)")
            }
        }
    }

    @Test func versionsOlderThanTheRetainedHistoryAreGoneAndCannotBeForked() throws {
        try withTemporaryDirectory("time-travel") { directory in
            // A short reach and a short action log: the 150 versions' segments are mostly dead, and go.
            let server = try TestServer(dataDirectory: directory) {
                $0.storage.segmentBytes = 4096
                $0.storage.snapshotEvery = 10
                $0.storage.historyVersions = 20
                $0.sessions.actionLogLimit = 20
            }
            let seen = try Self.history(server, "old", steps: 150)
            try server.compact()
            let gone = try Self.state(server, "old", at: 1)
            #expect(gone.status == 410)
            #expect(gone.errorCode == "version_gone")
            #expect(gone.errorMessage?.contains("oldest retained version") == true)
            let fork = try server.request(
                "POST", "/admin/sessions/old/fork", headers: server.admin, body: #"{"version":1,"id":"too-late"}"#)
            #expect(fork.status == 410)
            #expect(fork.errorCode == "version_gone")
            #expect(try server.request("GET", "/sessions/too-late").status == 404, "a refused fork leaves no session")
            // The newest version is always there, and can be forked.
            #expect(
                (try Self.state(server, "old", at: 150).json()["state"] as? [String: Any])?["value"] as? Int
                    == seen[150])
            #expect(
                try server.request(
                    "POST", "/admin/sessions/old/fork", headers: server.admin, body: #"{"version":150,"id":"recent"}"#
                ).status == 201)
        }
    }

    @Test(arguments: TestStorage.all)
    func forkStartsANewSessionAtAPastVersionThatSurvivesARestart(storage: TestStorage) async throws {
        try await storage.withPlace("time-travel") { place in
            var server = try TestServer(storage: place)
            let seen = try Self.history(server, "trunk", steps: 9)
            let fork = try server.request(
                "POST", "/admin/sessions/trunk/fork", headers: server.admin, body: #"{"version":5,"id":"branch"}"#)
            #expect(fork.status == 201)
            #expect(fork.header("Location") == "/sessions/branch")
            let forked = try fork.json()
            #expect(forked["version"] as? Int == 5)
            #expect((forked["state"] as? [String: Any])?["value"] as? Int == seen[5])
            let next = try server.request("POST", "/sessions/branch/actions?wait=true", body: #"{"type":"increase"}"#)
                .json()
            #expect(next["version"] as? Int == 6)
            #expect((next["state"] as? [String: Any])?["value"] as? Int == (seen[5] ?? 0) + 1)
            // The source is untouched; an id in use and a future version are refused.
            #expect(try server.request("GET", "/sessions/trunk").json()["version"] as? Int == 9)
            let taken = try server.request(
                "POST", "/admin/sessions/trunk/fork", headers: server.admin, body: #"{"version":2,"id":"branch"}"#)
            #expect(taken.status == 409)
            let future = try server.request(
                "POST", "/admin/sessions/trunk/fork", headers: server.admin, body: #"{"version":99}"#)
            #expect(future.status == 404)

            // After a restart the fork is a session like any other, with its own history.
            server.stop()
            server = try TestServer(storage: place)
            let restarted = try server.request("GET", "/sessions/branch").json()
            #expect(restarted["version"] as? Int == 6)
            #expect((restarted["state"] as? [String: Any])?["value"] as? Int == (seen[5] ?? 0) + 1)
            #expect(try server.request("GET", "/sessions/trunk").json()["version"] as? Int == 9)
            let again = try server.request("POST", "/sessions/branch/actions?wait=true", body: #"{"type":"increase"}"#)
                .json()
            #expect(again["version"] as? Int == 7)
            let past = try Self.state(server, "branch", at: 5)
            #expect(
                (try past.json()["state"] as? [String: Any])?["value"] as? Int == seen[5],
                "the fork's first version is the source's")
            #expect(try Self.state(server, "branch", at: 4).status == 410, "the fork has no history before it")
        }
    }
}
