import Foundation
import ReactorServerTesting
import Reactors
import SessionService
import Testing

/// Sessions survive restarts of an in-process server, and passivation, with every backend; damaged
/// file journals truncate (torn tail) or quarantine one session (corruption, changed reactor types).
@Suite(.offThePool) struct DurabilityTests {
    static func segments(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("journal-") }.sorted().map
        { directory + "/" + $0 }
    }

    @Test(arguments: TestStorage.all)
    func versionsStateAndActionLogSurviveARestart(storage: TestStorage) async throws {
        try await storage.withPlace("durability") { place in
            do {
                let server = try TestServer(storage: place)
                _ = try server.createSession("counter", id: "kept")
                for _ in 0..<3 {
                    #expect(
                        try server.request("POST", "/sessions/kept/actions", body: #"{"type":"increase"}"#).status
                            == 202)
                }
                #expect(try server.request("GET", "/sessions/kept").json()["version"] as? Int == 3)
            }
            let server = try TestServer(storage: place)
            let session = try server.request("GET", "/sessions/kept").json()
            #expect(session["version"] as? Int == 3)
            #expect((session["state"] as? [String: Any])?["value"] as? Int == 3)
            let log = try server.request("GET", "/admin/sessions/kept/actions", headers: server.admin).json()
            #expect((log["actions"] as? [[String: Any]])?.map { $0["seq"] as? Int } == [1, 2, 3])
            let next = try server.request("POST", "/sessions/kept/actions", body: #"{"type":"increase"}"#).json()
            #expect(next["seq"] as? Int == 4)
            let past = try server.request("GET", "/admin/sessions/kept/versions/1", headers: server.admin).json()
            #expect((past["state"] as? [String: Any])?["value"] as? Int == 1)
            let fork = try server.request(
                "POST", "/admin/sessions/kept/fork", headers: server.admin, body: #"{"version":2,"id":"forked"}"#)
            #expect(fork.status == 201)
            #expect(try fork.json()["version"] as? Int == 2)
        }
    }

    @Test func aTornTailIsTruncatedAndTheRestKept() throws {
        try withTemporaryDirectory("durability") { directory in
            do {
                let server = try TestServer(dataDirectory: directory)
                _ = try server.createSession("counter", id: "torn")
                for _ in 0..<2 {
                    _ = try server.request("POST", "/sessions/torn/actions", body: #"{"type":"increase"}"#)
                }
            }
            let segment = try #require(try Self.segments(directory).last)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
            let handle = try #require(FileHandle(forWritingAtPath: segment))
            handle.seekToEndOfFile()
            // A record frame announcing 40 bytes of which only 3 arrived: a crash mid-write.
            handle.write(Data([40, 0, 0, 0, 1, 2, 3, 4, 9, 9, 9]))
            try handle.close()
            let server = try TestServer(dataDirectory: directory)
            #expect(try server.request("GET", "/sessions/torn").json()["version"] as? Int == 2)
            #expect(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int == size)
            #expect(server.logs.values.contains { $0.message.contains("cut off an incomplete record") })
        }
    }

    @Test func corruptionInTheMiddleQuarantinesOnlyThatSession() throws {
        try withTemporaryDirectory("durability") { directory in
            do {
                let server = try TestServer(dataDirectory: directory)
                _ = try server.createSession("counter", id: "damaged")
                _ = try server.createSession("counter", id: "healthy")
                _ = try server.request("POST", "/sessions/damaged/actions", body: #"{"type":"increase"}"#)
                _ = try server.request("POST", "/sessions/healthy/actions", body: #"{"type":"increase"}"#)
            }
            let segment = try #require(try Self.segments(directory).first)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
            // The first mutation record belongs to "damaged": flip a byte of its JSON payload.
            let marker = Array(#"increase"#.utf8)
            let at = try #require(
                (0..<(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker })
            bytes[at] ^= 0x20
            try Data(bytes).write(to: URL(fileURLWithPath: segment))
            let server = try TestServer(dataDirectory: directory)
            let damaged = try server.request("GET", "/sessions/damaged")
            #expect(damaged.status == 409)
            #expect(damaged.text.contains("session_unavailable"))
            #expect(try server.request("GET", "/sessions/healthy").json()["version"] as? Int == 1)
            let listing = try server.request("GET", "/admin/sessions", headers: server.admin).json()
            let entry = (listing["sessions"] as? [[String: Any]])?.first { $0["id"] as? String == "damaged" }
            #expect((entry?["unavailable"] as? String)?.contains("checksum") == true)
            #expect(try server.request("DELETE", "/sessions/damaged").status == 204)
        }
    }

    /// A "counter" whose state no longer decodes what the old one journaled: `value` changed type, which no
    /// default fills in (a field merely added or removed would load).
    struct ChangedCounter: Reactor {
        enum Action: Codable, Sendable { case increase }
        struct State: Codable, Sendable { var value: String }
        let initialState = State(value: "")
    }

    @Test func aJournalFromAChangedReactorTypeIsQuarantined() throws {
        try withTemporaryDirectory("durability") { directory in
            do {
                let server = try TestServer(dataDirectory: directory)
                _ = try server.createSession("counter", id: "old")
                _ = try server.request("POST", "/sessions/old/actions", body: #"{"type":"increase"}"#)
            }
            let server = try TestServer(dataDirectory: directory) { _ in
            } catalog: {
                $0.register("counter") { ChangedCounter() }
            }
            let response = try server.request("GET", "/sessions/old")
            #expect(response.status == 409)
            #expect(response.text.contains("does not decode"))
            #expect(try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":"new"}"#).status == 201)
        }
    }

    @Test(arguments: TestStorage.all)
    func passivatedSessionsComeBackTransparently(storage: TestStorage) async throws {
        try await storage.withPlace("durability") { place in
            let server = try TestServer(storage: place) { $0.sessions.maxResident = 2 }
            for index in 0..<5 {
                _ = try server.createSession("counter", id: "s\(index)")
                for _ in 0...index {
                    _ = try server.request("POST", "/sessions/s\(index)/actions", body: #"{"type":"increase"}"#)
                }
            }
            #expect(server.server.service.store.residentCount <= 2)
            for index in 0..<5 {
                let session = try server.request("GET", "/sessions/s\(index)").json()
                #expect(session["version"] as? Int == index + 1)
                #expect(server.server.service.store.residentCount <= 2)
            }
            #expect(server.server.service.store.count == 5)
        }
    }

    @Test func aNewSessionStaysOnDiskUntilUsedAndAnUnchangedOneLeavesWithoutANewSnapshot() throws {
        try withTemporaryDirectory("durability") { directory in
            let server = try TestServer(dataDirectory: directory)
            let store = server.server.service.store
            let journalBytes = { () throws -> Int in
                try server.flushJournal()
                return try CompactionTests.diskBytes(directory)
            }
            let created = try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":"fresh"}"#)
            #expect(created.status == 201)
            #expect(try created.json()["version"] as? Int == 0)
            #expect(store.residentCount == 0)
            #expect(server.isResident("fresh") == false)
            let afterCreate = try journalBytes()

            // Read: loaded, then it leaves again with nothing new to journal.
            #expect(try server.request("GET", "/sessions/fresh").json()["version"] as? Int == 0)
            #expect(store.residentCount == 1)
            #expect(store.passivate(idleBefore: .max) == 1)
            #expect(try journalBytes() == afterCreate)

            // Changed: leaving memory journals a snapshot, and the change comes back.
            #expect(
                try server.request("POST", "/sessions/fresh/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            #expect(store.passivate(idleBefore: .max) == 1)
            #expect(try journalBytes() > afterCreate)
            let loaded = try server.request("GET", "/sessions/fresh").json()
            #expect(loaded["version"] as? Int == 1)
            #expect((loaded["state"] as? [String: Any])?["value"] as? Int == 1)
        }
    }

    /// Counts ticks merged from outside (a clock, a feed): they reach only a session in memory.
    struct TickReactor: Reactor {
        enum Action: Codable, Sendable { case tick }
        struct State: Codable, Sendable { var ticks = 0 }
        let initialState = State()
        let ticks: AsyncStream<Action>

        func reduce(state: State, mutation: Action) -> State { State(ticks: state.ticks + 1) }
        func transform(action: Flow<Action>) -> Flow<Action> { action.merge(with: ticks) }
    }

    @Test(arguments: TestStorage.all)
    func aSessionMergingOutsideActionsStaysInMemory(storage: TestStorage) async throws {
        try await storage.withPlace("durability") { place in
            let (ticks, continuation) = AsyncStream<TickReactor.Action>.makeStream()
            let server = try TestServer(
                storage: place, catalog: { $0.register("ticker") { TickReactor(ticks: ticks) } })
            let store = server.server.service.store
            #expect(try server.request("POST", "/sessions", body: #"{"reactor":"ticker","id":"t"}"#).status == 201)
            _ = try server.createSession("counter", id: "c")
            // The counter session left memory at once; the ticker stays, and idle passivation passes it over.
            #expect(store.residentCount == 1)
            #expect(store.passivate(idleBefore: .max) == 0)
            #expect(server.isResident("t") == true)
            continuation.finish()
        }
    }
}
