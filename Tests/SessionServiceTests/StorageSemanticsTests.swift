import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// What storage promises a client, on every backend (``TestStorage/all``): stub mode, forced states and
/// pulse counts come back after passivation and restarts, seqs continue, an expired or deleted
/// session stays gone, and what `?wait=true` answered is there after a restart.
@Suite(.offThePool) struct StorageSemanticsTests {
    static let increase = #"{"type":"increase"}"#

    @Test(arguments: TestStorage.all)
    func stubModeAndForcedStatesComeBackAfterPassivationAndARestart(storage: TestStorage) async throws {
        try await storage.withPlace("stub") { place in
            do {
                let server = try TestServer(storage: place)
                try server.createSession("counter", id: "stubbed")
                #expect(
                    try server.request("POST", "/sessions/stubbed/actions?wait=true", body: Self.increase).json()[
                        "version"] as? Int == 1)
                #expect(
                    try server.request(
                        "PUT", "/admin/sessions/stubbed/stub", headers: server.admin, body: #"{"enabled":true}"#
                    ).status == 200)
                #expect(
                    try server.request("POST", "/sessions/stubbed/actions", body: Self.increase).json()["seq"] as? Int
                        == 2)
                let forced = try server.request(
                    "PUT", "/admin/sessions/stubbed/state", headers: server.admin, body: #"{"value":42}"#)
                #expect(forced.status == 200)
                #expect(try forced.json()["version"] as? Int == 2)
                #expect(server.server.service.store.passivate(idleBefore: .max) == 1)
                let back = try server.request("GET", "/sessions/stubbed").json()
                #expect(back["version"] as? Int == 2)
                #expect((back["state"] as? [String: Any])?["value"] as? Int == 42)
            }
            let server = try TestServer(storage: place)
            let session = try server.request("GET", "/sessions/stubbed").json()
            #expect(
                try server.adminEntry("stubbed")?["stub"] as? Bool == true, "stub mode was forgotten over a restart")
            #expect(session["version"] as? Int == 2)
            #expect((session["state"] as? [String: Any])?["value"] as? Int == 42)
            // Still stubbed: logged, not reduced.
            #expect(
                try server.request("POST", "/sessions/stubbed/actions", body: Self.increase).json()["seq"] as? Int == 3)
            let log = try server.request("GET", "/admin/sessions/stubbed/actions", headers: server.admin).json()
            let entries = try #require(log["actions"] as? [[String: Any]])
            #expect(entries.map { $0["seq"] as? Int } == [1, 2, 3])
            #expect(entries.map { $0["stubbed"] as? Bool } == [false, true, true])
            #expect(
                try server.request(
                    "PUT", "/admin/sessions/stubbed/stub", headers: server.admin, body: #"{"enabled":false}"#
                ).status == 200)
            let next = try server.request("POST", "/sessions/stubbed/actions?wait=true", body: Self.increase).json()
            #expect(next["seq"] as? Int == 4)
            #expect(next["version"] as? Int == 3)
            #expect((next["state"] as? [String: Any])?["value"] as? Int == 43)
        }
    }

    @Test(arguments: TestStorage.all)
    func pulseCountsContinueAfterARestart(storage: TestStorage) async throws {
        let empty = #"{"type":"add","title":""}"#
        try await storage.withPlace("pulses") { place in
            do {
                let server = try TestServer(storage: place)
                try server.createSession("todo", id: "alerts")
                for _ in 0..<2 {
                    #expect(try server.request("POST", "/sessions/alerts/actions?wait=true", body: empty).status == 200)
                }
            }
            let server = try TestServer(storage: place)
            let stream = try server.subscribe("/sessions/alerts/events")
            #expect(try stream.nextEvent().id == "2")
            #expect(
                try server.request("POST", "/sessions/alerts/actions?wait=true", body: empty).json()["version"] as? Int
                    == 3)
            #expect(try stream.nextEvent().id == "3")
            let pulse = try stream.nextEvent()
            #expect(pulse.event == "pulse")
            #expect(try pulse.object()["name"] as? String == "alert")
            #expect(try pulse.object()["count"] as? Int == 3, "the pulse's count started over after a restart")
        }
    }

    @Test(arguments: TestStorage.all)
    func deletedAndExpiredSessionsStayGoneAndTheirIDsStartAfresh(storage: TestStorage) async throws {
        try await storage.withPlace("gone") { place in
            do {
                let server = try TestServer(storage: place) { $0.sessions.idleTTLSeconds = 60 }
                await server.clock.advance(by: .seconds(100))
                for id in ["deleted", "expired", "kept"] {
                    try server.createSession("counter", id: id)
                    #expect(
                        try server.request("POST", "/sessions/\(id)/actions?wait=true", body: Self.increase).status
                            == 200)
                }
                #expect(try server.request("DELETE", "/sessions/deleted").status == 204)
                await server.clock.advance(by: .seconds(45))
                #expect(try server.request("GET", "/sessions/kept").status == 200)
                await server.clock.advance(by: .seconds(30))
                #expect(try server.adminEntry("expired") == nil, "an idle session outlived its TTL")
                #expect(try server.request("GET", "/sessions/expired").status == 404)
            }
            let server = try TestServer(storage: place)
            #expect(try server.request("GET", "/sessions/deleted").status == 404)
            #expect(try server.request("GET", "/sessions/expired").status == 404)
            #expect(try server.request("GET", "/sessions/kept").json()["version"] as? Int == 1)
            // The ids are free again, and a session created under one has nothing of the old one.
            for id in ["deleted", "expired"] {
                try server.createSession("counter", id: id)
                let first = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: Self.increase).json()
                #expect(first["seq"] as? Int == 1)
                #expect(first["version"] as? Int == 1)
                let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
                #expect((log["actions"] as? [[String: Any]])?.count == 1)
            }
        }
    }

    @Test(arguments: TestStorage.all)
    func whatWaitTrueAnsweredSurvivesAnAbruptStop(storage: TestStorage) async throws {
        try await storage.withPlace("abrupt") { place in
            let server = try await ServerProcess.start(
                arguments: place.arguments, environment: ["REACTOR_ADMIN_TOKEN": TestServer.adminToken])
            let client = try server.client()
            #expect(try client.request("POST", "/sessions", body: #"{"reactor":"counter","id":"c"}"#).status == 201)
            var answered = 0
            for _ in 0..<20 {
                let response = try client.request("POST", "/sessions/c/actions?wait=true", body: Self.increase)
                #expect(response.status == 200)
                answered = try response.json()["version"] as? Int ?? answered
            }
            let accepted = try client.request("POST", "/sessions/c/actions", body: Self.increase)
            #expect(accepted.status == 202)
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

            let again = try await ServerProcess.start(
                arguments: place.arguments, environment: ["REACTOR_ADMIN_TOKEN": TestServer.adminToken])
            defer { again.process.signal(SIGKILL) }
            // On a backend shared by several instances, one started under another name would wait out
            // the killed one's claims (503 meanwhile); the same name takes them back at once.
            try await eventually("the session to be served after the restart", within: .seconds(30)) {
                try again.client().request("GET", "/sessions/c").status == 200
            }
            let session = try again.client().request("GET", "/sessions/c").json()
            #expect(session["version"] as? Int ?? 0 >= answered, "a version answered with ?wait=true was lost")
            let log = try again.client().request(
                "GET", "/admin/sessions/c/actions", headers: [("Authorization", "Bearer \(TestServer.adminToken)")]
            ).json()
            #expect(
                (log["actions"] as? [[String: Any]])?.map { $0["seq"] as? Int } == Array(1...21),
                "an accepted action (202) was lost")
        }
    }
}
