import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Durable timers of real `reactor-server` processes on the real clock (a child has no injected clock; the
/// reminders are 1 to 2 s away and every wait is bounded): `kill -9` while timers fall due, then a restart,
/// fires each timer exactly once, as the action log shows; with the NATS backend and two instances exactly
/// one instance fires a timer, also after its owner is killed.
@Suite(.offThePool, .serialized) struct TimerCrashTests {
    static let admin = [("Authorization", "Bearer \(TestServer.adminToken)")]

    static func start(_ place: StoragePlace, extra: [String] = []) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: place.arguments + ["--loops", "2"] + extra,
            environment: ["REACTOR_ADMIN_TOKEN": TestServer.adminToken])
    }

    /// The session's state lists.
    static func lists(_ client: TestClient, _ id: String) throws -> (pending: [String], fired: [String]) {
        let state = try #require(try client.request("GET", "/sessions/\(id)").json()["state"] as? [String: Any])
        return (state["pending"] as? [String] ?? [], state["fired"] as? [String] ?? [])
    }

    /// The names of the timers whose actions the session's log holds, in log order.
    static func firedTimers(_ client: TestClient, _ id: String) throws -> [String] {
        let log = try client.request("GET", "/admin/sessions/\(id)/actions", headers: admin).json()
        return (log["actions"] as? [[String: Any]] ?? []).compactMap { $0["timer"] as? String }
    }

    /// Every reminder fired once (state and log agree) and none is pending.
    static func expectEachFiredOnce(_ client: TestClient, _ id: String, _ texts: [String]) throws {
        let (pending, fired) = try lists(client, id)
        #expect(pending == [])
        #expect(fired.sorted() == texts.sorted(), "fired: \(fired)")
        #expect(try firedTimers(client, id).sorted() == texts.sorted(), "the action log's timer actions")
    }

    @Test(arguments: TestStorage.all)
    func kill9WhileTimersFallDueThenRestartFiresEachOnce(storage: TestStorage) async throws {
        try await storage.withPlace("timer-crash") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            #expect(
                try client.request("POST", "/sessions", body: #"{"reactor":"reminders","id":"crash"}"#).status == 201)
            let texts = (0..<40).map { "r\($0)" }
            for (index, text) in texts.enumerated() {
                let body = #"{"type":"remind","text":"\#(text)","afterSeconds":\#(1 + index % 2)}"#
                #expect(try client.request("POST", "/sessions/crash/actions", body: body).status == 202)
            }
            // Killed once the first reminders fired: the rest are due, or firing, as it dies.
            try await eventually("the first reminders to fire", within: .seconds(20)) {
                try !Self.lists(client, "crash").fired.isEmpty
            }
            server.process.signal(SIGKILL)
            _ = try await server.stop()
            server = try await Self.start(place)
            client = try server.client()
            try await eventually("every reminder to have fired after the restart", within: .seconds(20)) {
                try Self.lists(client, "crash").pending.isEmpty
            }
            try Self.expectEachFiredOnce(client, "crash", texts)
            // A reminder due while the server is down (killed before its second) fires after the next start.
            #expect(
                try client.request(
                    "POST", "/sessions/crash/actions?wait=true",
                    body: #"{"type":"remind","text":"down","afterSeconds":1}"#
                ).status == 200)
            server.process.signal(SIGKILL)
            _ = try await server.stop()
            server = try await Self.start(place)
            client = try server.client()
            try await eventually("the reminder due during the downtime to fire", within: .seconds(20)) {
                try Self.lists(client, "crash").fired.contains("down")
            }
            try Self.expectEachFiredOnce(client, "crash", texts + ["down"])
            #expect(try await server.stop() == .exited(0))
        }
    }

    /// `reactor_timers_fired_total` of one instance.
    static func timersFired(_ client: TestClient) throws -> Int { try metric(client, "reactor_timers_fired_total") }

    /// One unlabelled sample of an instance's `/metrics`; -1 when it has none.
    static func metric(_ client: TestClient, _ name: String) throws -> Int {
        let text = try client.request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    @Test(.enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
    func twoInstancesFireATimerOnceAlsoAfterTheOwnerIsKilled() async throws {
        try await NATSFailoverTests.withPair { a, b in
            let clientA = try a.client()
            let clientB = try b.client()
            #expect(
                try clientA.request("POST", "/sessions", body: #"{"reactor":"reminders","id":"shared"}"#).status == 201)
            let first = try clientA.request(
                "POST", "/sessions/shared/actions?wait=true", body: #"{"type":"remind","text":"one","afterSeconds":1}"#)
            #expect(first.status == 200)
            // b knows the timer (from the session's entry) but leaves it to a, which runs the session.
            try await eventually("the owner to fire the timer", within: .seconds(20)) {
                try Self.lists(clientA, "shared").fired == ["one"]
            }
            // The counter moves just after the action is sent, so a reader may see the state first.
            try await eventually("a's count of fired timers", within: .seconds(10)) {
                try Self.timersFired(clientA) == 1
            }
            #expect(
                try Self.timersFired(clientB) == 0, "the instance that does not run the session fired its timer too")
            // a is killed before the next one is due: b, asking no request of the session, claims it and fires it.
            let second = try clientA.request(
                "POST", "/sessions/shared/actions?wait=true", body: #"{"type":"remind","text":"two","afterSeconds":2}"#)
            #expect(second.status == 200)
            // Killed at once: the answer came only once the session's bucket entry named the sooner timer.
            a.process.signal(SIGKILL)
            try await eventually("b to fire the dead owner's timer", within: .seconds(30)) {
                try Self.timersFired(clientB) == 1
            }
            #expect(try Self.lists(clientB, "shared").fired == ["one", "two"])
            try Self.expectEachFiredOnce(clientB, "shared", ["one", "two"])
        }
    }
}
