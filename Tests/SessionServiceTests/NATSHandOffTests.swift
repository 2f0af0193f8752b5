import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Live hand-off on the NATS backend, with real `reactor-server` processes: a request for a session
/// that another live instance runs moves the session to the instance that got the request (the
/// owner stores a final snapshot, sends its subscribers to reconnect with `session_moved`, and gives
/// its claim up), instead of answering 503 until the owner goes idle.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSHandOffTests {

    /// A metric's value in `/metrics` of `server` (0 when absent).
    static func metric(_ name: String, on server: ServerProcess) throws -> Double {
        let text = try server.client().request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test func aLiveOwnerHandsItsSessionToTheInstanceAskedForIt() async throws {
        try await NATSFailoverTests.withPair { a, b in

            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"moving"}"#).status == 201
            )
            for version in 1...3 {
                let answer = try a.client().request(
                    "POST", "/sessions/moving/actions?wait=true", body: #"{"type":"increase"}"#)
                #expect(try answer.json()["version"] as? Int == version, "a answered \(answer.status) \(answer.text)")
            }
            let watcher = try a.client()
            try watcher.openEventStream("/sessions/moving/events")
            #expect(try watcher.nextEvent().id == "3")

            // b gets a request for it while a runs it: a lets it go, b answers as its owner.
            let moved = try b.client().request(
                "POST", "/sessions/moving/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(moved.status == 200, "b answered \(moved.status) \(moved.text)")
            #expect(try moved.json()["version"] as? Int == 4)

            // a's subscriber is sent to reconnect, then its stream ends.
            let farewell = try watcher.nextEvent()
            #expect(farewell.event == "error", "a's subscriber got \(farewell)")
            #expect(farewell.data?.contains(#""code":"session_moved""#) == true, "a's subscriber got \(farewell)")
            #expect(farewell.data?.contains("instance b") == true, "the event does not say where it went: \(farewell)")
            #expect(try watcher.readToEnd().isEmpty)

            // Reconnecting where it runs now, with the last id seen, resumes after it.
            let follower = try b.client()
            try follower.openEventStream("/sessions/moving/events", headers: [("Last-Event-ID", "3")])
            let resumed = try follower.nextEvent()
            #expect(resumed.id == "4" && resumed.data?.contains(#""value":4"#) == true, "resumed with \(resumed)")

            let log = try NATSFailoverTests.actionLog("moving", on: b)
            #expect(log.compactMap { $0["seq"] as? Int } == [1, 2, 3, 4])
            #expect(try Self.metric("reactor_storage_handoffs_total", on: a) == 1)
            #expect(try Self.metric("reactor_storage_handoff_seconds_count", on: b) == 1)
            #expect(
                try Self.metric("reactor_storage_takeovers_total", on: b) == 0,
                "a live owner's session counted as taken from a dead one")
        }
    }

    @Test func requestsAlternatingBetweenInstancesLoseNothing() async throws {
        try await NATSFailoverTests.withPair { a, b in
            let (ids, load) = try await NATSFailoverTests.startLoad(creatingOn: a, alsoOn: b)
            // The sessions move with the requests, back and forth; each move is a hand-off, not a
            // take-over (nobody died), and every acknowledged action stays.
            for (round, instance) in [1, 0, 1].enumerated() {
                let before = ids.map { load.ledger.count($0, instance: instance) }
                load.prefer(instance)
                try await NATSFailoverTests.whileLogging(instance == 0 ? a : b) {
                    try await eventually(
                        "round \(round): instance \(instance) to acknowledge actions of every session",
                        within: .seconds(30)
                    ) {
                        zip(ids, before).allSatisfy { load.ledger.count($0, instance: instance) >= $1 + 3 }
                    }
                }
            }
            try load.stop()
            try await NATSFailoverTests.verify(ids, on: b, ledger: load.ledger)
            #expect(
                try Self.metric("reactor_storage_takeovers_total", on: a)
                    + Self.metric("reactor_storage_takeovers_total", on: b) == 0)
            #expect(try Self.metric("reactor_storage_handoffs_total", on: a) >= Double(2 * ids.count))
        }
    }

    @Test func aKilledOwnersSessionIsTakenOverAtOnceNotAfterItsClaimExpires() async throws {
        try await NATSFailoverTests.withPair(claimTTL: 60) { a, b in
            // A claim TTL far longer than the test's bound: only finding the owner gone can be quick.
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"orphan"}"#).status == 201
            )
            for _ in 1...2 {
                #expect(
                    try a.client().request("POST", "/sessions/orphan/actions?wait=true", body: #"{"type":"increase"}"#)
                        .status == 200)
            }
            #expect(try await a.stop(signal: SIGKILL) == .signalled(SIGKILL))

            // Its NATS connection is gone at once (the server sees the socket close): nothing answers its
            // hand-off subject, so b takes the session over without waiting 60 s for its heartbeat to expire.
            var answer: TestResponse?
            try await eventually("b to serve the dead instance's session", within: .seconds(20)) {
                answer = try b.client().request(
                    "POST", "/sessions/orphan/actions?wait=true", body: #"{"type":"increase"}"#)
                return answer?.status == 200
            }
            #expect(try answer?.json()["version"] as? Int == 3)
            #expect(try Self.metric("reactor_storage_takeovers_total", on: b) == 1)
            #expect(b.standardError.contains("took a session over from an instance that is gone"))
        }
    }

    @Test func aPausedOwnerIsNeitherWaitedOnNorTakenOverAndHandsOffOnceResumed() async throws {
        try await NATSFailoverTests.withPair(claimTTL: 60, extraB: ["--set", "http.loops=1"]) { a, b in
            // Its claim outlives the test: a paused owner keeps its connection, so nothing may take over.
            // One event loop: while a request waits for the paused owner, only a loop that does not
            // wait with it can answer anything else.
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"frozen"}"#).status == 201
            )
            #expect(
                try a.client().request("POST", "/sessions/frozen/actions?wait=true", body: #"{"type":"increase"}"#)
                    .status == 200)
            try await a.process.pause()

            // b asks a, which cannot answer; meanwhile b's one loop answers other requests.
            let waiting = try b.client()
            let body = #"{"type":"increase"}"#
            try waiting.send(
                "POST /sessions/frozen/actions?wait=true HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )
            #expect(try b.client().request("GET", "/healthz").status == 200)
            #expect(
                !waiting.hasInput,
                """
                b answered the request waiting on the paused owner before /healthz: \
                its event loop waited on the network
                """
            )
            // Refused, naming a, and not taken over.
            let refused = try waiting.readResponse(method: "POST")
            #expect(
                refused.status == 503 && refused.errorCode == "storage_unavailable", "\(refused.status) \(refused.text)"
            )
            #expect(refused.errorMessage?.contains("instance a") == true, "\(refused.text)")
            let again = try b.client().request(
                "POST", "/sessions/frozen/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(again.status == 503, "\(again.status) \(again.text)")
            #expect(try b.client().request("GET", "/healthz").status == 200)
            #expect(try NATSHandOffTests.metric("reactor_storage_takeovers_total", on: b) == 0)

            // Resumed, it answers the next hand-off request: the session moves, nothing was lost.
            a.process.signal(SIGCONT)
            var moved: TestResponse?
            try await eventually("the session to move to b once a runs again", within: .seconds(30)) {
                moved = try b.client().request(
                    "POST", "/sessions/frozen/actions?wait=true", body: #"{"type":"increase"}"#)
                return moved?.status == 200
            }
            #expect(try moved?.json()["version"] as? Int == 2)
            #expect(try Self.metric("reactor_storage_handoffs_total", on: a) == 1)
        }
    }
}
