import Foundation
import ReactorServerTesting
import Reactors
import Testing

@testable import SessionService

/// The service's periodic work, driven only by advancing the injected clock (never by calling it):
/// idle sessions leave memory, due snapshots are written, old journal segments are deleted.
@Suite(.offThePool) struct MaintenanceTests {
    @Test func idleSessionsLeaveMemoryOnTheClock() async throws {
        try await withTemporaryDirectory("maintenance") { directory in
            let server = try TestServer(dataDirectory: directory) { $0.sessions.passivateAfterSeconds = 30 }
            let store = server.server.service.store
            try server.createSession("counter", id: "resting")
            #expect(
                try server.request("POST", "/sessions/resting/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            #expect(store.residentCount == 1)
            await server.clock.advance(by: .seconds(25))
            #expect(store.residentCount == 1, "it left memory before being idle for 30 s")
            await server.clock.advance(by: .seconds(10))
            #expect(store.residentCount == 0, "idle for 35 s and still in memory")
            #expect(try server.adminEntry("resting")?["resident"] as? Bool == false)
            // It comes back, changed state and all, on its next request.
            #expect(try server.request("GET", "/sessions/resting").json()["version"] as? Int == 1)
            #expect(store.residentCount == 1)
        }
    }

    /// One action, 25 mutations from an effect that waits for the test to open its gate, which it does
    /// once the action is accepted: only the maintenance tick (not the action path, which looks when
    /// the action arrives) can then see that a snapshot is due.
    struct BurstReactor: Reactor {
        enum Action: Codable, Sendable { case burst }
        struct State: Codable, Sendable { var count = 0 }
        let initialState = State()
        let gate: Gate

        func mutate(action: Action) -> Effect<Action> {
            .run { [gate] emit in
                try await gate.wait()
                for _ in 0..<25 { await emit(.burst) }
            }
        }

        func reduce(state: State, mutation: Action) -> State { State(count: state.count + 1) }
    }

    @Test func dueSnapshotsAreWrittenOnTheClock() async throws {
        try await withTemporaryDirectory("maintenance") { directory in
            let gate = Gate()
            let server = try TestServer(dataDirectory: directory, configure: { $0.storage.snapshotEvery = 10 }) {
                $0.register("burst") { BurstReactor(gate: gate) }
            }
            let storage = try #require(server.server.storage)
            try server.createSession("burst", id: "busy")
            #expect(try server.request("POST", "/sessions/busy/actions", body: #"{"type":"burst"}"#).status == 202)
            gate.open()
            try await eventually("the burst to reach version 25") {
                try server.request("GET", "/sessions/busy").json()["version"] as? Int == 25
            }
            try server.flushJournal()
            // Replaying version 25 needs the 25 mutations after the first snapshot until a tick writes one.
            #expect(try storage.history(of: "busy", upTo: 25)?.states.count == 25)
            await server.clock.advance(by: .seconds(5))
            #expect(
                try storage.history(of: "busy", upTo: 25)?.states.count == 0,
                "no snapshot at version 25 after a maintenance tick")
        }
    }

    @Test func oldSegmentsAreDeletedOnTheClock() async throws {
        try await withTemporaryDirectory("maintenance") { directory in
            let server = try TestServer(dataDirectory: directory) {
                $0.storage.segmentBytes = 4096
                $0.storage.snapshotEvery = 10
                $0.sessions.actionLogLimit = 20
            }
            try server.createSession("counter", id: "hot")
            try CompactionTests.increase(server, "hot", count: 300)
            let before = try DurabilityTests.segments(directory)
            #expect(before.count > 3, "300 actions fill several 4 KiB segments")
            await server.clock.advance(by: .seconds(5))
            let after = try DurabilityTests.segments(directory)
            #expect(!after.contains(before[0]), "the oldest segment is still there after a maintenance tick")
            #expect(after.count < before.count)
            #expect(try server.request("GET", "/sessions/hot").json()["version"] as? Int == 300)
            #expect(try CompactionTests.actionSeqs(server, "hot") == Array(281...300))
        }
    }
}

/// `sessions.idleTTLSeconds`: no request and no subscriber for that long deletes a session, whether it is
/// in memory or only on disk; a subscriber keeps it.
@Suite(.offThePool) struct IdleExpiryTests {
    @Test func aWatchedSessionStaysAndItsTTLStartsWhenTheLastSubscriberLeaves() async throws {
        let server = try TestServer { $0.sessions.idleTTLSeconds = 60 }
        try server.createSession("counter", id: "watched")
        var stream: TestClient? = try server.subscribe("/sessions/watched/events")
        #expect(try stream?.nextEvent().id == "0")
        await server.clock.advance(by: .seconds(120))
        // The admin listing does not touch it: the subscriber alone kept it.
        #expect(
            try server.adminEntry("watched")?["subscribers"] as? Int == 1, "a session with a live subscriber expired")
        stream = nil
        try await eventually("the server to see the subscriber leave") {
            try server.adminEntry("watched")?["subscribers"] as? Int == 0
        }
        // Idle from now on: 59 s later it is still there; within one more sweep (15 s) it is gone.
        await server.clock.advance(by: .seconds(59))
        #expect(try server.adminEntry("watched") != nil, "it expired before being idle for the TTL")
        await server.clock.advance(by: .seconds(16))
        #expect(try server.adminEntry("watched") == nil)
        #expect(try server.request("GET", "/sessions/watched").status == 404)
    }

    @Test func sessionsOnDiskExpireAndStayDeletedAcrossARestart() async throws {
        try await withTemporaryDirectory("idle-expiry") { directory in
            var server = try TestServer(dataDirectory: directory) { $0.sessions.idleTTLSeconds = 60 }
            // Well after the clock's start, so an idle time counted from zero would show.
            await server.clock.advance(by: .seconds(100))
            try server.createSession("counter", id: "cold")
            try server.createSession("counter", id: "warm")
            #expect(server.server.service.store.residentCount == 0, "new sessions wait on disk")
            await server.clock.advance(by: .seconds(45))
            #expect(try server.request("GET", "/sessions/warm").status == 200)
            #expect(try server.adminEntry("cold") != nil, "a stored session expired before its TTL")
            await server.clock.advance(by: .seconds(30))
            #expect(try server.adminEntry("cold") == nil, "a stored session outlived its TTL")
            #expect(try server.request("GET", "/sessions/warm").status == 200)

            // Deleted from the journal, not only forgotten: a restart does not bring it back. After the
            // restart the stored sessions count as active from the start, and expire a TTL later.
            server.stop()
            server = try TestServer(dataDirectory: directory) { $0.sessions.idleTTLSeconds = 60 }
            #expect(try server.adminEntry("cold") == nil)
            #expect(try server.adminEntry("warm") != nil)
            await server.clock.advance(by: .seconds(45))
            #expect(try server.adminEntry("warm") != nil)
            await server.clock.advance(by: .seconds(30))
            #expect(try server.adminEntry("warm") == nil)
            server.stop()
            server = try TestServer(dataDirectory: directory)
            #expect(try server.request("GET", "/sessions/warm").status == 404)
        }
    }
}
