import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An owner whose records in flight are fenced off by the instance that took its session over (as when
/// a NATS node dies and the owner is not heard from for longer than the claim TTL): those records can
/// never be stored, so nothing showing them may leave it (the acknowledgement becomes a 503, the stream
/// that would show the new state closes without it), and the instance goes on serving everything else.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSLostRecordsTests {
    @Test func anOwnerWhoseRecordsWereFencedOffRefusesWhatShowsThemAndServesOn() async throws {
        try await NATSServerProcess.with { nats in
            // Instance a reaches NATS through a relay the test can stall; b directly. a waits a minute for a
            // publish's answer, so its stalled records reach JetStream once the relay resumes (rather than
            // timing out first and being dropped by a's own lease check): what refuses them is the fence.
            let relay = try PausableTCPRelay(upstreamPort: nats.port)
            defer { relay.stop() }
            let prefix = "l" + String(UUID().uuidString.prefix(8)).lowercased()
            let a = try await NATSFailoverTests.instance(
                "a", servers: "nats://127.0.0.1:\(relay.port)", prefix: prefix, replicas: 1, claimTTL: 2,
                extra: ["--set", "storage.nats.timeoutSeconds=60"])
            defer { a.process.signal(SIGKILL) }
            let b = try await NATSFailoverTests.instance(
                "b", servers: nats.url, prefix: prefix, replicas: 1, claimTTL: 2)
            defer { b.process.signal(SIGKILL) }

            #expect(try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"s"}"#).status == 201)
            #expect(
                try a.client().request("POST", "/sessions/s/actions?wait=true", body: #"{"type":"increase"}"#).json()[
                    "version"] as? Int == 1)
            let watcher = try a.client(readTimeout: .seconds(60))
            _ = try watcher.openEventStream("/sessions/s/events")
            #expect(try watcher.nextEvent().id == "1")
            // A stream of s on b, relayed from a, which runs it.
            let relayed = try b.client(readTimeout: .seconds(60))
            _ = try relayed.openEventStream("/sessions/s/events")
            #expect(try relayed.nextEvent().id == "1")

            // a's connection to NATS stalls. It accepts an action while its lease still holds; the
            // action's records wait in the stalled connection, and so do its answer and the new state.
            relay.pause()
            let probe = try a.client(readTimeout: .seconds(60))
            let body = #"{"type":"increase"}"#
            try probe.send(
                "POST /sessions/s/actions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )

            // b takes s over: a answers no hand-off and its heartbeat lapses.
            try await NATSFailoverTests.whileLogging(b) {
                try await eventually("b to take s over", within: .seconds(60)) {
                    try b.client().request("GET", "/sessions/s").status == 200
                }
            }
            // b's relayed stream of s is told the session moved while a is still cut off: b runs s now, and
            // a, which could say so, cannot reach anyone. It never shows a's lost state.
            let seen = try await relayed.offPool { relayed -> [TestEvent] in
                var seen: [TestEvent] = []
                while let event = try? relayed.nextEvent(within: .seconds(30)) {
                    seen.append(event)
                    if event.event == "error" || event.event == "end" { break }
                }
                return seen
            }
            #expect(
                !seen.contains { $0.event == "state" && $0.id == "2" },
                """
                b's relayed stream showed a state that was never stored: \
                \(seen.map { "\($0.event ?? "message") \($0.id ?? "") \($0.data ?? "")" })
                """
            )
            #expect(
                seen.last?.event == "error" && seen.last?.data?.contains("session_moved") == true,
                """
                b's relayed stream did not end with session_moved: \
                \(seen.map { "\($0.event ?? "message") \($0.id ?? "") \($0.data ?? "")" })
                """
            )

            relay.resume()

            // a's records reach JetStream behind b's fence: they can never be stored.
            // Reads that wait on the instances run off the shared pool: in-process servers of other
            // tests need its threads meanwhile.
            let answer = try await probe.offPool { try $0.readResponse(method: "POST") }
            #expect(
                !(200..<300).contains(answer.status),
                "a acknowledged an action whose records were fenced off: \(answer.status) \(answer.text)")
            let rest = String(decoding: try await watcher.offPool { try $0.readToEnd() }, as: UTF8.self)
            #expect(!rest.contains("id: 2"), "a's stream showed a state that was never stored: \(rest)")
            // a goes on: it did not stop itself, and serves other sessions.
            #expect(a.process.isRunning, "a stopped: \(a.standardError.suffix(4000))")
            try await NATSFailoverTests.whileLogging(a) {
                try await eventually("a to be healthy again", within: .seconds(60)) {
                    try a.client().request("GET", "/healthz").status == 200
                }
            }
            #expect(try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"t"}"#).status == 201)
            #expect(
                try a.client().request("POST", "/sessions/t/actions?wait=true", body: #"{"type":"increase"}"#).json()[
                    "version"] as? Int == 1)
            let metrics = try a.client().request("GET", "/metrics").text
            let lost = metrics.split(separator: "\n").first { $0.hasPrefix("reactor_storage_lost_records_total ") }
            #expect(
                lost.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 > 0 } == true,
                "\(lost ?? "no lost-records counter")")
            // JetStream itself refused them (Nats-Expected-Last-Subject-Sequence behind b's fence).
            let fenced = metrics.split(separator: "\n").first {
                $0.hasPrefix("reactor_storage_fencing_rejections_total ")
            }
            let refusedByFence = fenced.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 > 0 } == true
            let said = a.standardError.suffix(3000)
            #expect(
                refusedByFence, "a's records were not refused by the fence: \(fenced ?? "no fencing counter"); \(said)")

            // What is stored is what b serves: version 1, one action.
            let stored = try b.client().request("GET", "/sessions/s").json()
            #expect(stored["version"] as? Int == 1)
            #expect(try NATSFailoverTests.actionLog("s", on: b).count == 1)
            #expect(
                try b.client().request("POST", "/sessions/s/actions?wait=true", body: #"{"type":"increase"}"#).json()[
                    "version"] as? Int == 2)
        }
    }
}
