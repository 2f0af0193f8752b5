import NATS
import ReactorServerTesting
import Testing

@testable import SessionService

/// A relay whose owner stopped feeding it without a word (its end message lost on the way, or the subscription
/// dropped as the session moved away and back) is found by the next upkeep, which asks each owner which relays it
/// still feeds: its streams get `event: error` `session_moved` and follow the session again, never stay silent.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct RelayVerificationTests {
    @Test func aRelayItsOwnerNoLongerFeedsEndsSoItsStreamsReconnect() async throws {
        try await TestStorage.nats.withPlace("relay-check") { place in
            let a = try TestServer(storage: place) { $0.storage.nats.instance = "a" }
            let b = try TestServer(storage: place) { $0.storage.nats.instance = "b" }
            _ = try a.createSession("counter", id: "watched")
            #expect(
                try a.request("POST", "/sessions/watched/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)

            // Streamed on b, relayed from a, where the session runs.
            let stream = try b.subscribe("/sessions/watched/events")
            #expect(try stream.nextEvent().id == "1")
            let relays = a.server.service.relays
            try await eventually("a to feed b's relay") { relays.heldSubjects.count == 1 }

            // a drops the subscription silently: b hears nothing more, however the session changes.
            for subject in relays.heldSubjects { relays.release(subject) }
            #expect(
                try a.request("POST", "/sessions/watched/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            // b's upkeep (every 5 s of its clock) asks a, and ends the relay a no longer feeds.
            await b.clock.advance(by: .seconds(6))
            let ended = try stream.nextEvent()
            #expect(ended.event == "error" && ended.data?.contains(#""code":"session_moved""#) == true, "\(ended)")

            // Reconnected, the stream follows the session again from where it was.
            let again = try b.subscribe("/sessions/watched/events", headers: [("Last-Event-ID", "1")])
            #expect(try again.nextEvent().id == "2")
            #expect(
                try a.request("POST", "/sessions/watched/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            #expect(try again.nextEvent().id == "3")
        }
    }

    /// A session in memory here whose claim another instance holds (taken over while this copy sat idle, so no
    /// refused write told it) leaves memory at the next upkeep: its streams get `session_moved` instead of a past
    /// version for good.
    @Test func aSessionClaimedByAnotherInstanceLeavesThisOne() async throws {
        try await TestStorage.nats.withPlace("claim-check") { place in
            let server = try TestServer(storage: place) { $0.storage.nats.instance = "a" }
            _ = try server.createSession("counter", id: "idle")
            let stream = try server.subscribe("/sessions/idle/events")
            #expect(try stream.nextEvent().id == "0")

            // Another instance's claim, written behind this one's back.
            let settings = Dictionary(place.settings, uniquingKeysWith: { _, last in last })
            let prefix = try #require(settings["storage.nats.prefix"])
            var options = try NATSOptions(servers: try #require(settings["storage.nats.servers"]))
            options.name = "claim-check"
            let connection = NATSConnection(options: options)
            try await connection.connect(timeout: .seconds(10))
            defer { connection.close() }
            let claims = KeyValue(
                jetStream: JetStream(connection: connection, timeout: .seconds(30)), bucket: "\(prefix)-claims")
            _ = try await claims.put("idle", value: Array(#"{"instance":"b","incarnation":"elsewhere"}"#.utf8))

            try await eventually("the session to leave the instance its claim no longer names") {
                await server.clock.advance(by: .seconds(6))
                return
                    !(try server.request("GET", "/admin/sessions?scope=local", headers: server.admin).text.contains(
                        #""idle""#))
            }
            let ended = try stream.nextEvent()
            #expect(ended.event == "error" && ended.data?.contains(#""code":"session_moved""#) == true, "\(ended)")
        }
    }
}
