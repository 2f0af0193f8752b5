import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// A stream resumed on an id that was deleted and created again (issue 22): `Last-Event-ID` was read from the
/// old session, so it must not hold back the new one. On the single-session stream a `Last-Event-ID` above
/// the current version starts from the current state; on the multiplexed one the cursor carries each
/// session's incarnation, so a resume is exact on the same session and starts afresh on a new one, also
/// after a restart.
@Suite(.offThePool) struct RecreatedSessionStreamTests {
    typealias Multiplexed = MultiplexedEventStreamTests

    /// Sends `count` `increase` actions to session `id`.
    static func increase(_ server: TestServer, _ id: String, times count: Int) throws {
        for _ in 0..<count {
            let answer = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(answer.status == 200, "\(answer.status) \(answer.text)")
        }
    }

    /// Deletes session `id` and creates it again.
    static func recreate(_ server: TestServer, _ id: String) throws {
        #expect(try server.request("DELETE", "/sessions/\(id)").status == 204)
        #expect(try server.createSession("counter", id: id) == id)
    }

    /// The single-session stream: `Last-Event-ID: 5` from the deleted session, the new one at version 2.
    static func singleStreamStartsFromTheCurrentState(_ server: TestServer) throws {
        _ = try server.createSession("counter", id: "x")
        try increase(server, "x", times: 5)
        try recreate(server, "x")
        try increase(server, "x", times: 2)
        let resumed = try server.subscribe("/sessions/x/events", headers: [("Last-Event-ID", "5")])
        let first = try resumed.nextEvent(within: .seconds(10))
        #expect(first.id == "2" && first.data == #"{"value":2}"#, "the stream began with \(first)")
        // A Last-Event-ID this session did show still repeats nothing.
        let exact = try server.subscribe("/sessions/x/events", headers: [("Last-Event-ID", "2")])
        try increase(server, "x", times: 1)
        #expect(try exact.nextEvent().id == "3")
        #expect(try resumed.nextEvent().id == "3")
    }

    /// The multiplexed stream: a cursor read from the deleted a (at version 3) on the new a at version 3;
    /// `restart` (with storage) restarts the server between the re-creation and the resume.
    static func multiplexedCursorTellsTheNewSessionFromTheOld(_ server: TestServer, restart: (() throws -> TestServer)?)
        throws
    {
        for id in ["a", "b"] { _ = try server.createSession("counter", id: id) }
        try increase(server, "a", times: 3)
        let stream = try server.subscribe("/events?sessions=a,b")
        let seen = try (0..<2).map { _ in try stream.nextEvent() }
        #expect(try seen.map(Multiplexed.describe) == ["a: state 3", "b: state 0"])
        let old = try #require(seen.last?.id)

        try recreate(server, "a")
        try increase(server, "a", times: 3)
        let server = try restart?() ?? server
        // The old cursor: the new a starts from its current state, b (the same session) repeats nothing.
        let resumed = try server.subscribe("/events?sessions=a,b", headers: [("Last-Event-ID", old)])
        let first = try resumed.nextEvent(within: .seconds(10))
        #expect(try Multiplexed.describe(first) == "a: state 3", "the resumed stream began with \(first)")
        try increase(server, "b", times: 1)
        let second = try resumed.nextEvent()
        #expect(try Multiplexed.describe(second) == "b: state 1")

        // A cursor of the new a resumes it exactly: nothing repeated, the next state next.
        let current = try #require(second.id)
        #expect(current != old)
        let again = try server.subscribe("/events?sessions=a,b", headers: [("Last-Event-ID", current)])
        try increase(server, "a", times: 1)
        #expect(try Multiplexed.next(1, on: again) == ["a: state 4"])
    }

    @Test func aSingleStreamOnARecreatedIdStartsFromItsCurrentStateInMemory() throws {
        try Self.singleStreamStartsFromTheCurrentState(try TestServer())
    }

    @Test(arguments: TestStorage.all)
    func aSingleStreamOnARecreatedIdStartsFromItsCurrentState(storage: TestStorage) async throws {
        try await storage.withPlace("recreated-single") { place in
            try Self.singleStreamStartsFromTheCurrentState(try TestServer(storage: place))
        }
    }

    @Test func aMultiplexedCursorTellsARecreatedSessionFromTheOldOneInMemory() throws {
        try Self.multiplexedCursorTellsTheNewSessionFromTheOld(try TestServer(), restart: nil)
    }

    @Test(arguments: TestStorage.all)
    func aMultiplexedCursorTellsARecreatedSessionFromTheOldOneAcrossARestart(storage: TestStorage) async throws {
        try await storage.withPlace("recreated-multiplexed") { place in
            let before = try TestServer(storage: place)
            try Self.multiplexedCursorTellsTheNewSessionFromTheOld(
                before,
                restart: {
                    before.stop()
                    return try TestServer(storage: place)
                })
        }
    }
}
