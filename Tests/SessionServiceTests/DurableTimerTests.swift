import Foundation
import ReactorServerTesting
import Reactors
import Testing

@testable import SessionService

/// Durable timers over real sockets, on the injected clock: the `reminders` example's timers fire once, as
/// actions marked `"timer"` in the action log, in memory, after a passivation, after a restart (both
/// backends), and the admin routes list and cancel them.
@Suite(.offThePool) struct DurableTimerTests {
    /// The session's state.
    static func state(_ server: TestServer, _ id: String) throws -> [String: Any] {
        try #require(try server.request("GET", "/sessions/\(id)").json()["state"] as? [String: Any])
    }

    /// The action log entries sent by a timer, as (timer name, action type, text).
    static func timerEntries(_ server: TestServer, _ id: String) throws -> [String] {
        let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
        let entries = try #require(log["actions"] as? [[String: Any]])
        return entries.compactMap { entry in
            guard let timer = entry["timer"] as? String else { return nil }
            let action = entry["action"] as? [String: Any]
            return "\(timer):\(action?["type"] as? String ?? "?"):\(action?["text"] as? String ?? "?")"
        }
    }

    static func remind(_ server: TestServer, _ id: String, _ text: String, after seconds: Int) throws -> TestResponse {
        try server.request(
            "POST", "/sessions/\(id)/actions?wait=true",
            body: #"{"type":"remind","text":"\#(text)","afterSeconds":\#(seconds)}"#)
    }

    @Test func aReminderFiresOnceAtItsTimeAsATimerAction() async throws {
        let server = try TestServer()
        try server.createSession("reminders", id: "r")
        #expect(try Self.remind(server, "r", "tea", after: 60).status == 200)
        #expect(try Self.state(server, "r")["pending"] as? [String] == ["tea"])
        await server.clock.advance(by: .seconds(59))
        #expect(try Self.state(server, "r")["fired"] as? [String] == [], "fired a second early")
        await server.clock.advance(by: .seconds(1))
        try await eventually("tea to fire") { try Self.state(server, "r")["fired"] as? [String] == ["tea"] }
        #expect(try Self.state(server, "r")["pending"] as? [String] == [])
        await server.clock.advance(by: .seconds(3600))
        #expect(try Self.state(server, "r")["fired"] as? [String] == ["tea"], "fired twice")
        #expect(try Self.timerEntries(server, "r") == ["tea:due:tea"])
    }

    @Test func rescheduleCancelAndValidation() async throws {
        let server = try TestServer()
        try server.createSession("reminders", id: "r")
        #expect(try Self.remind(server, "r", "tea", after: 10).status == 200)
        #expect(try Self.remind(server, "r", "tea", after: 100).status == 200)
        #expect(try Self.remind(server, "r", "post", after: 20).status == 200)
        #expect(try Self.state(server, "r")["pending"] as? [String] == ["tea", "post"])
        let cancel = try server.request(
            "POST", "/sessions/r/actions?wait=true", body: #"{"type":"cancel","text":"post"}"#)
        #expect(cancel.status == 200)
        await server.clock.advance(by: .seconds(50))
        #expect(try Self.state(server, "r")["fired"] as? [String] == [], "the rescheduled or the cancelled one fired")
        await server.clock.advance(by: .seconds(50))
        try await eventually("tea to fire at its new time") {
            try Self.state(server, "r")["fired"] as? [String] == ["tea"]
        }
        for (seconds, status) in [(0, 422), (86_401, 422), (-5, 422), (1, 200), (86_400, 200)] {
            let answer = try Self.remind(server, "r", "x\(seconds)", after: seconds)
            #expect(answer.status == status, "afterSeconds \(seconds)")
            if status == 422 { #expect(answer.text.contains("invalid_action")) }
        }
        let due = try server.request("POST", "/sessions/r/actions", body: #"{"type":"due","text":"x1"}"#)
        #expect(due.status == 422)
        #expect(due.text.contains("unknown_action"))
        #expect(due.text.contains("timers"))
    }

    @Test func adminListsAndCancelsTimers() async throws {
        let server = try TestServer()
        try server.createSession("reminders", id: "r")
        _ = try Self.remind(server, "r", "later", after: 300)
        _ = try Self.remind(server, "r", "sooner thing", after: 30)
        let listed = try server.request("GET", "/admin/sessions/r/timers", headers: server.admin).json()
        let timers = try #require(listed["timers"] as? [[String: Any]])
        #expect(timers.map { $0["name"] as? String } == ["sooner thing", "later"])
        #expect((timers.first?["action"] as? [String: Any])?["type"] as? String == "due")
        let at = try #require(timers.first?["at"] as? String)
        #expect(at.hasSuffix("Z"))
        #expect(try server.request("GET", "/admin/sessions/r/timers").status == 401)
        let cancelled = try server.request("DELETE", "/admin/sessions/r/timers/sooner%20thing", headers: server.admin)
        #expect(cancelled.status == 204)
        let again = try server.request("DELETE", "/admin/sessions/r/timers/sooner%20thing", headers: server.admin)
        #expect(again.status == 404)
        #expect(again.text.contains("unknown_timer"))
        #expect(try server.request("GET", "/admin/sessions/nobody/timers", headers: server.admin).status == 404)
        await server.clock.advance(by: .seconds(60))
        // The timer went; the pending list is the reactor's own and still names it (the admin cancelled the timer).
        #expect(try Self.state(server, "r")["fired"] as? [String] == [])
        let left = try server.request("GET", "/admin/sessions/r/timers", headers: server.admin).json()
        #expect((left["timers"] as? [[String: Any]])?.map { $0["name"] as? String } == ["later"])
    }

    /// A reminders session `sleeper` on `server` (passivating after 30 s) with a timer `wake` due in 600 s, passivated
    /// 60 s on; its store.
    static func sleepingReminder(on server: TestServer) async throws -> SessionStore {
        let store = server.server.service.store
        try server.createSession("reminders", id: "sleeper")
        #expect(try Self.remind(server, "sleeper", "wake", after: 600).status == 200)
        await server.clock.advance(by: .seconds(60))
        #expect(store.residentCount == 0, "idle and still in memory")
        return store
    }

    @Test func aDueTimerLoadsItsPassivatedSession() async throws {
        try await withTemporaryDirectory("timers") { directory in
            let server = try TestServer(dataDirectory: directory) { $0.sessions.passivateAfterSeconds = 30 }
            let store = try await Self.sleepingReminder(on: server)
            await server.clock.advance(by: .seconds(540))
            try await eventually("the due timer to load and fire") { store.residentCount == 1 }
            #expect(try Self.state(server, "sleeper")["fired"] as? [String] == ["wake"])
            #expect(try Self.timerEntries(server, "sleeper") == ["wake:due:wake"])
        }
    }

    /// A session due while its storage does not answer (its nats-server stopped with SIGSTOP) cannot be loaded
    /// then: its timer is kept and looked at again, and fires once the storage answers, without a restart.
    @Test(.enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
    func aDueTimerWhoseLoadFailsFiresOnceTheStorageAnswersAgain() async throws {
        let nats = try await NATSServerProcess.start()
        do {
            try await withTemporaryDirectory("timers-load-fails") { local in
                let place = StoragePlace(
                    directory: nil,
                    settings: [
                        ("storage.backend", "nats"), ("storage.nats.servers", nats.url), ("storage.nats.replicas", "1"),
                        ("storage.nats.timeoutSeconds", "1"), ("storage.dataDir", local),
                    ])
                let server = try TestServer(storage: place) { $0.sessions.passivateAfterSeconds = 30 }
                let store = try await Self.sleepingReminder(on: server)
                nats.pause()
                await server.clock.advance(by: .seconds(540))
                _ = try await server.logs.waitForMessage(containing: "due timers wait: it could not be loaded here")
                #expect(store.residentCount == 0)
                nats.resume()
                try await eventually("the server to reach its storage again") {
                    try server.request("GET", "/healthz").status == 200
                }
                // Nothing but the kept timer loads the session: a request for it would, and would fire it itself.
                await server.clock.advance(by: .seconds(5))
                try await eventually("the kept timer to load the session 5 s later") { store.residentCount == 1 }
                try await eventually("the kept timer to fire") {
                    try Self.state(server, "sleeper")["fired"] as? [String] == ["wake"]
                }
                #expect(try Self.timerEntries(server, "sleeper") == ["wake:due:wake"])
            }
        } catch {
            nats.resume()
            await nats.shutdown()
            throw error
        }
        await nats.shutdown()
    }

    @Test(arguments: TestStorage.all)
    func aTimerDueDuringDowntimeFiresOnceAfterTheRestart(storage: TestStorage) async throws {
        try await storage.withPlace("timers") { place in
            do {
                let server = try TestServer(storage: place)
                try server.createSession("reminders", id: "kept")
                #expect(try Self.remind(server, "kept", "soon", after: 30).status == 200)
                #expect(try Self.remind(server, "kept", "much later", after: 3000).status == 200)
                #expect(try Self.remind(server, "kept", "dropped", after: 40).status == 200)
                #expect(
                    try server.request(
                        "POST", "/sessions/kept/actions?wait=true", body: #"{"type":"cancel","text":"dropped"}"#
                    ).status == 200)
            }
            do {
                // Each test server's clock starts at the same instant: 120 s after it, "soon" is overdue.
                let server = try TestServer(storage: place)
                #expect(server.server.service.store.residentCount == 0)
                await server.clock.advance(by: .seconds(120))
                try await eventually("the overdue timer to fire after the restart") {
                    try Self.state(server, "kept")["fired"] as? [String] == ["soon"]
                }
                #expect(try Self.state(server, "kept")["pending"] as? [String] == ["much later"])
                #expect(try Self.timerEntries(server, "kept") == ["soon:due:soon"])
            }
            let server = try TestServer(storage: place)
            await server.clock.advance(by: .seconds(120))
            let timers = try server.request("GET", "/admin/sessions/kept/timers", headers: server.admin).json()
            #expect((timers["timers"] as? [[String: Any]])?.map { $0["name"] as? String } == ["much later"])
            #expect(
                try Self.state(server, "kept")["fired"] as? [String] == ["soon"], "fired again after a second restart")
            #expect(try Self.timerEntries(server, "kept") == ["soon:due:soon"])
        }
    }
}
