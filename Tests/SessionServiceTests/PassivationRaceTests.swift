import Foundation
import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

@testable import SessionService

#if canImport(Glibc)
    import Glibc
#endif

/// Requests racing the passivation of their session are served by the session loaded back, never
/// answered 404 as if it had been deleted, with every backend.
@Suite(.offThePool) struct PassivationRaceTests {
    /// The lease is not what this test is about: with NATS, a claim TTL of a minute keeps a slow
    /// heartbeat from lapsing it (seen under ThreadSanitizer: the default 5 s lapsed, and an action
    /// got 503 storage_unavailable, rightly).
    static let racingStorage = [TestStorage.file, TestStorage.nats.with("storage.nats.claimTTLSeconds", "60")]

    @Test(arguments: racingStorage)
    func requestsRacingPassivationNeverSeeA404(storage: TestStorage) async throws {
        try await storage.withPlace("passivationrace") { place in
            let server = try TestServer(storage: place)
            let store = server.server.service.store
            _ = try server.createSession("counter", id: "flicker")
            let done = Atomic<Bool>(false)
            let passivations = Atomic<Int>(0)
            let passivator = Thread {
                while !done.load(ordering: .relaxed) {
                    passivations.add(store.passivate(idleBefore: .max), ordering: .relaxed)
                    // Paced, not spinning: a core spun for the whole run starved the tests beside it,
                    // and a request still meets several passivations while it is served.
                    usleep(50)
                }
            }
            passivator.start()
            defer { done.store(true, ordering: .relaxed) }
            let connection = try server.connect()
            // The requests wait on the server one after another: on a thread of their own, so this test
            // never holds one of the shared pool's threads for its whole run.
            let run = try await connection.offPool {
                connection -> (statuses: [Int: Int], accepted: Int, failure: String?, final: Int?) in
                var statuses: [Int: Int] = [:]
                var accepted = 0
                for index in 0..<600 {
                    let response: TestResponse
                    switch index % 3 {
                    case 0:
                        response = try connection.request(
                            "POST", "/sessions/flicker/actions", body: #"{"type":"increase"}"#)
                        if response.status == 202 { accepted += 1 }
                    case 1:
                        response = try connection.request(
                            "POST", "/sessions/flicker/actions?wait=true", body: #"{"type":"increase"}"#)
                        if response.status == 200 { accepted += 1 }
                    default:
                        response = try connection.request("GET", "/sessions/flicker")
                    }
                    statuses[response.status, default: 0] += 1
                    if response.status == 404 || response.status >= 500 {
                        return (statuses, accepted, "request \(index): \(response.status) \(response.text)", nil)
                    }
                }
                done.store(true, ordering: .relaxed)
                // Serial per session: once this one is reduced, every accepted action before it is too.
                let final = try connection.request(
                    "POST", "/sessions/flicker/actions?wait=true", body: #"{"type":"increase"}"#
                ).json()
                return (statuses, accepted, nil, final["version"] as? Int)
            }
            if let failure = run.failure { Issue.record(Comment(rawValue: failure)) }
            #expect(passivations.load(ordering: .relaxed) > 0, "the session was never passivated during the run")
            #expect(run.final == run.accepted + 1, "statuses: \(run.statuses)")
        }
    }

    @Test(arguments: TestStorage.all)
    func aStreamOpenedAsItsSessionLeavesMemoryEndsWithSessionPassivated(storage: TestStorage) async throws {
        try await storage.withPlace("passivated-stream") { place in
            let server = try TestServer(storage: place)
            try server.createSession("counter", id: "leaving")
            #expect(
                try server.request("POST", "/sessions/leaving/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            let service = server.server.service
            // The race, made to happen every time: the session leaves memory between the lookup and the
            // subscription (what a passivation on another thread does at the worst instant).
            let left = Recorder<Int>()
            let racing = ClosureResponder { _, writer in
                guard let session = service.store.session("leaving") else { return writer.respond(status: 404) }
                left.record(service.store.passivate(idleBefore: .max))
                SessionEventStream.open(
                    session, writer: writer, headers: HTTPHeaders(), lastEventID: nil, select: nil, selectText: nil)
            }
            try await withHTTPServer(racing) { _, address in
                let stream = try TestClient(address)
                try stream.openEventStream("/sessions/leaving/events")
                let event = try stream.nextEvent()
                #expect(event.event == "error")
                #expect(try event.object()["code"] as? String == "session_passivated")
                try stream.readToEnd()
            }
            #expect(left.values == [1], "the session did not leave memory in the race")
            // Reconnecting with Last-Event-ID follows the session loaded back.
            let again = try server.subscribe("/sessions/leaving/events", headers: [("Last-Event-ID", "0")])
            #expect(try again.nextEvent().id == "1")
        }
    }
}
