import Foundation
import ReactorServerTesting
import Testing

/// What an action costs in JetStream round trips on the NATS backend, counted by `/metrics`: an action whose
/// reactor reduces as it is submitted (the counter) sends its mutation and its accept in one publish, so a
/// `?wait=true` answer waits for one acknowledgement, not two in a row.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct NATSPublishBatchingTests {
    /// The value of the sample line `name` in `/metrics` (labels included), or nil when there is none.
    static func sample(_ server: TestServer, _ name: String) throws -> Double? {
        let text = try server.request("GET", "/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test func anActionReducedAsItIsSubmittedCostsOnePublish() async throws {
        try await NATSServerProcess.with { nats in
            let server = try TestServer(
                storage: StoragePlace(directory: nil, settings: NATSOperationsTests.settings(nats.url)))
            try server.createSession("counter", id: "b")
            // The first action loads the session (claim, fence): round trips of its own, not counted below.
            #expect(
                try server.request("POST", "/sessions/b/actions?wait=true", body: #"{"type":"increase"}"#).status == 200
            )
            let publishes = #"reactor_storage_jetstream_requests_total{kind="publish"}"#
            let records = "reactor_storage_published_records_total"
            let publishedBefore = try #require(try Self.sample(server, publishes))
            let recordsBefore = try #require(try Self.sample(server, records))

            let actions = 20
            for expected in 2...(actions + 1) {
                let answer = try server.request(
                    "POST", "/sessions/b/actions?wait=true", body: #"{"type":"increase"}"#)
                #expect(answer.status == 200)
                #expect(try answer.json()["version"] as? Int == expected)
            }

            // Each answer came once its records were acknowledged, so every publish is counted by now.
            let published = try #require(try Self.sample(server, publishes)) - publishedBefore
            let stored = try #require(try Self.sample(server, records)) - recordsBefore
            #expect(published == Double(actions), "\(published) publishes for \(actions) actions")
            #expect(
                stored >= Double(2 * actions),
                "\(stored) records for \(actions) actions (a mutation and an accept each)")
        }
    }
}
