import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What answers what while the journal cannot be written (a 64 KiB file-size limit, as in
/// ``StorageFailureTests``): every request gets an answer at once. What is stored reads as usual, a
/// stored session nobody touched since the start included; what would show a change that is not
/// stored answers `503 storage_unavailable`; the admin listing lists everything and marks the
/// sessions whose newest changes are not stored. Every read here must be answered within 5 s,
/// far below `http.writeTimeoutSeconds` (60 s), after which an unanswered read used to be closed.
@Suite(.offThePool) struct DiskFullReadTests {
    static let bound: Duration = .seconds(5)

    /// A server whose journal cannot grow past 64 KiB, with "resting" (created before the start, never
    /// touched since), "other" (in memory, everything stored) and "full" (in memory, its newest change
    /// not stored), and the refusal of the action whose records could not be written.
    static func fill(_ directory: String) async throws -> (server: ServerProcess, refusal: TestResponse) {
        let settings = ["--set", "http.writeTimeoutSeconds=60"]
        do {
            let first = try await ServerProcess.start(arguments: ["--data-dir", directory] + settings)
            let connection = try first.client()
            #expect(try Self.create(connection, "resting"))
            #expect(try Self.increase(connection, "resting"))
            #expect(try await first.stop() == .exited(0))
        }
        let server = try await StorageFailureTests.start(directory, ["http.writeTimeoutSeconds=60"])
        let connection = try server.client()
        #expect(try Self.create(connection, "other"))
        #expect(try Self.increase(connection, "other"))
        #expect(try Self.create(connection, "full"))
        for _ in 0..<5_000 {
            let response = try connection.request("POST", "/sessions/full/actions?wait=true", body: Self.increase)
            if response.status != 200 { return (server, response) }
        }
        throw TestFailure("5,000 actions were accepted under a 64 KiB file-size limit")
    }

    static let increase = #"{"type":"increase"}"#

    static func create(_ connection: TestClient, _ id: String) throws -> Bool {
        try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"\#(id)"}"#).status == 201
    }

    static func increase(_ connection: TestClient, _ id: String) throws -> Bool {
        try connection.request("POST", "/sessions/\(id)/actions?wait=true", body: increase).status == 200
    }

    @Test func everyReadIsAnsweredAtOnceAndWhatIsStoredReads() async throws {
        try await withTemporaryDirectory("disk-full-reads") { directory in
            let (server, refusal) = try await Self.fill(directory)
            #expect(refusal.errorCode == "storage_unavailable", "\(refusal.text)")
            let client = try server.client(readTimeout: Self.bound)
            let admin = StorageFailureTests.admin

            // A stored session nobody touched since the start loads and reads as stored.
            let resting = try client.request("GET", "/sessions/resting")
            #expect(resting.status == 200, "\(resting.text)")
            #expect(try resting.json()["version"] as? Int == 1)
            #expect(try client.request("GET", "/sessions/other").status == 200)

            // "full" shows a change that is not stored: 503 at once, on a connection that stays open.
            let unstored = try client.request("GET", "/sessions/full")
            #expect(unstored.status == 503, "\(unstored.text)")
            #expect(unstored.errorCode == "storage_unavailable")
            #expect(unstored.errorMessage?.contains("not stored") == true, "\(unstored.text)")
            #expect(unstored.errorMessage?.contains("File too large") == true, "\(unstored.text)")
            let actions = try client.request("GET", "/admin/sessions/full/actions", headers: admin)
            #expect(actions.errorCode == "storage_unavailable", "\(actions.text)")
            let events = try client.request("GET", "/sessions/full/events")
            #expect(events.status == 503, "\(events.text)")
            #expect(events.errorCode == "storage_unavailable")

            // Streams of stored sessions open and show their state; a multiplexed stream's part whose
            // session has a change not stored ends with an error, and the other parts go on.
            let stream = try server.client(readTimeout: Self.bound)
            _ = try stream.openEventStream("/sessions/other/events")
            #expect(try stream.nextEvent().id == "1")
            let many = try server.client(readTimeout: Self.bound)
            _ = try many.openEventStream("/events?sessions=other,full,resting")
            var kinds: [String: String] = [:]
            for _ in 0..<3 {
                let event = try many.nextEvent()
                kinds[event.session ?? "?"] = event.event
                if event.event == "error" { #expect(event.data?.contains("storage_unavailable") == true, "\(event)") }
            }
            #expect(kinds == ["other": "state", "full": "error", "resting": "state"])

            // The listing answers, and says which sessions' newest changes are not stored.
            let listing = try client.request("GET", "/admin/sessions", headers: admin)
            #expect(listing.status == 200, "\(listing.text)")
            let sessions = try #require(try listing.json()["sessions"] as? [[String: Any]])
            let pairs = sessions.compactMap { entry in (entry["id"] as? String).map { ($0, entry) } }
            let byID = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
            #expect(Set(byID.keys) == ["resting", "other", "full"], "\(listing.text)")
            #expect((byID["full"]?["unavailable"] as? String)?.contains("not stored") == true, "\(listing.text)")
            #expect(byID["other"]?["unavailable"] == nil, "\(listing.text)")
            #expect(byID["resting"]?["unavailable"] == nil, "\(listing.text)")

            // Time travel reads what the files hold.
            let past = try client.request("GET", "/admin/sessions/full/versions/1", headers: admin)
            #expect(past.status == 200, "\(past.text)")
            // Changes are refused, reads of what they did not change go on.
            #expect(try client.request("POST", "/sessions/resting/actions", body: Self.increase).status == 503)
            #expect(try client.request("GET", "/sessions/resting").status == 200)
            #expect(try client.request("GET", "/healthz").status == 503)
            #expect(try await server.stop() == .exited(0))
        }
    }
}
