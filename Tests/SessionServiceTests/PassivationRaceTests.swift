import Foundation
import SessionService
import Synchronization
import ReactorServerTesting
import Testing

/// Requests racing the passivation of their session are served by the session loaded back, never
/// answered 404 as if it had been deleted.
@Suite struct PassivationRaceTests {
    @Test func requestsRacingPassivationNeverSeeA404() throws {
        try withTemporaryDirectory("passivationrace") { directory in
            let server = try TestServer(dataDirectory: directory)
            let store = server.server.service.store
            _ = try server.createSession("counter", id: "flicker")
            let done = Atomic<Bool>(false)
            let passivations = Atomic<Int>(0)
            let passivator = Thread {
                while !done.load(ordering: .relaxed) {
                    passivations.add(store.passivate(idleBefore: .max), ordering: .relaxed)
                }
            }
            passivator.start()
            defer { done.store(true, ordering: .relaxed) }
            let connection = try server.connect()
            var statuses: [Int: Int] = [:]
            var accepted = 0
            for index in 0..<600 {
                let response: TestResponse
                switch index % 3 {
                case 0:
                    response = try connection.request("POST", "/sessions/flicker/actions", body: #"{"type":"increase"}"#)
                    if response.status == 202 { accepted += 1 }
                case 1:
                    response = try connection.request("POST", "/sessions/flicker/actions?wait=true", body: #"{"type":"increase"}"#)
                    if response.status == 200 { accepted += 1 }
                default:
                    response = try connection.request("GET", "/sessions/flicker")
                }
                statuses[response.status, default: 0] += 1
                if response.status == 404 || response.status >= 500 {
                    Issue.record("request \(index): \(response.status) \(response.text)")
                    break
                }
            }
            done.store(true, ordering: .relaxed)
            #expect(passivations.load(ordering: .relaxed) > 0, "the session was never passivated during the run")
            // Serial per session: once this one is reduced, every accepted action before it is too.
            let final = try connection.request("POST", "/sessions/flicker/actions?wait=true", body: #"{"type":"increase"}"#).json()
            #expect(final["version"] as? Int == accepted + 1, "statuses: \(statuses)")
        }
    }
}
