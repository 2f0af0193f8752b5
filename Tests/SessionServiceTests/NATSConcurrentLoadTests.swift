import Dispatch
import Foundation
import ReactorServerTesting
import Synchronization
import Testing

@testable import SessionService

/// Two instances loading one session at the same moment, on a real nats-server, with the race nats-server 2.9
/// loses under load (nats-server#4320) made to happen on purpose: each load is held step by step
/// (``LoadInterference``), and the second writer's claim and fence go without their compare-and-set, so both
/// instances' claims and both fences are accepted, as that server accepts them. Whatever the server lets through,
/// exactly one instance may run the session.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSConcurrentLoadTests {
    @Test func twoLoadsWhoseClaimsAndFencesAreBothAcceptedLeaveOneInstanceRunningTheSession() async throws {
        try await TestStorage.nats.withPlace("concurrent-load") { place in
            try Self.storedSession(place, "s", version: 2)
            try await Self.withInstances(place) { a, b in
                let race = LoadChoreography()
                race.interfere(in: a, "a", holdingAt: [.claimRead, .subjectRead])
                race.interfere(in: b, "b", holdingAt: [.claimRead, .subjectRead])

                async let answerOfA = offPool { try a.request("GET", "/sessions/s") }
                async let answerOfB = offPool { try b.request("GET", "/sessions/s") }
                // Both read the claim before either writes one: each finds the session unclaimed.
                try await race.reach("a", .claimRead)
                try await race.reach("b", .claimRead)
                // a claims it; b's claim lands over a's (accepted, as the race accepts it).
                race.release("a", .claimRead)
                try await race.reach("a", .subjectRead)
                race.release("b", .claimRead)
                try await race.reach("b", .subjectRead)
                #expect(try Self.claim("s", in: a)?.instance == "b", "b's claim did not land over a's")
                // Both read the records up to the same message; a's fence lands first, b's after it.
                race.release("a", .subjectRead)
                let servedByA = try await answerOfA
                race.release("b", .subjectRead)
                let servedByB = try await answerOfB
                try await race.reach("b", .fenceAcknowledged)

                #expect(servedByA.status == 200, "\(servedByA.text)")
                #expect(try servedByA.json()["version"] as? Int == 2)
                #expect(servedByB.status == 503, "b runs the session a fenced first: \(servedByB.text)")
                #expect(servedByB.errorMessage?.contains("another instance (a) fenced the session") == true)
                #expect(try Self.fencingRejections(b) == 1)
                #expect(try Self.fencingRejections(a) == 0)
                // The loser gave its claim up: the claim names a again, so nobody takes the session from a unasked.
                try await eventually("b to put a's claim back") { try Self.claim("s", in: a)?.instance == "a" }

                race.stop(a, b)
                // From here on a client sees the session move forward only, whichever instance it asks.
                var seen = 2
                for round in 0..<3 {
                    let (writer, reader) = round % 2 == 0 ? (a, b) : (b, a)
                    let written = try writer.request(
                        "POST", "/sessions/s/actions?wait=true", body: #"{"type":"increase"}"#)
                    #expect(written.status == 200, "\(written.text)")
                    let version = try #require(try written.json()["version"] as? Int)
                    #expect(version == seen + 1, "an action made version \(version) after version \(seen)")
                    seen = version
                    if round == 0 {
                        // b's fence came after a's: a wrote on after it, as the claim b put back allows.
                        #expect(a.logs.values.contains { $0.message.contains("left its fence") })
                    }
                    try await eventually("the other instance to show version \(seen) or later") {
                        let read = try reader.request("GET", "/sessions/s")
                        if read.status == 200, let version = try read.json()["version"] as? Int {
                            #expect(version >= seen, "version \(version) was shown after version \(seen)")
                            return version >= seen
                        }
                        return false
                    }
                }
            }
        }
    }

    @Test func aLoadWhoseClaimIsOverwrittenRightAfterItLandedGivesUpBeforeFencing() async throws {
        try await TestStorage.nats.withPlace("overwritten-claim") { place in
            try Self.storedSession(place, "s", version: 2)
            try await Self.withInstances(place) { a, b in
                let race = LoadChoreography()
                race.interfere(in: a, "a", holdingAt: [.claimRead, .claimWritten])
                race.interfere(in: b, "b", holdingAt: [.claimRead])

                async let answerOfA = offPool { try a.request("GET", "/sessions/s") }
                try await race.reach("a", .claimRead)
                async let answerOfB = offPool { try b.request("GET", "/sessions/s") }
                try await race.reach("b", .claimRead)
                // a's claim lands; b's lands over it before a reads its own back.
                race.release("a", .claimRead)
                try await race.reach("a", .claimWritten)
                race.release("b", .claimRead)
                try await race.reach("b", .claimWritten)
                race.release("a", .claimWritten)

                let servedByA = try await answerOfA
                let servedByB = try await answerOfB
                #expect(servedByA.status == 503, "a runs a session whose claim names b: \(servedByA.text)")
                #expect(
                    servedByA.errorMessage?.contains("instance b claimed it at the same moment") == true,
                    "\(servedByA.text)")
                #expect(servedByB.status == 200, "\(servedByB.text)")
                #expect(try servedByB.json()["version"] as? Int == 2)
                #expect(try Self.claim("s", in: b)?.instance == "b")
                // a gave up before its fence: b's is the only one on the subject, so no rival check was needed.
                #expect(!race.reached.values.contains("a subjectRead"))
                let fencers = try Self.fencers("s", in: b)
                #expect(fencers.last == "b" && !fencers.contains("a"), "fences on s: \(fencers)")
                #expect(try Self.fencingRejections(a) == 0)
                #expect(try Self.fencingRejections(b) == 0)

                race.stop(a, b)
                let written = try b.request("POST", "/sessions/s/actions?wait=true", body: #"{"type":"increase"}"#)
                #expect(try written.json()["version"] as? Int == 3, "\(written.text)")
            }
        }
    }

    /// A log of an earlier stay of the session here learns late that it was fenced off (a refused publish answered
    /// after the session left memory and came back with a new log): the copy in memory now is not the one taken over.
    @Test func aLateRefusalOfAnEarlierLogLeavesTheNewerCopyOfTheSessionAlone() async throws {
        try await TestStorage.nats.withPlace("late-refusal") { place in
            let server = try TestServer(storage: place) { $0.sessions.passivateAfterSeconds = 30 }
            defer { server.stop() }
            let storage = try Self.storage(server)
            let store = server.server.service.store
            _ = try server.createSession("counter", id: "s")
            #expect(
                try server.request("POST", "/sessions/s/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            let earlier = try #require(storage.logs.withLock { $0["s"] })
            // Idle: it leaves memory, its log sends what it had and goes.
            await server.clock.advance(by: .seconds(35))
            try await eventually("the session's log to be released") { storage.logs.withLock { $0["s"] == nil } }
            #expect(try server.request("GET", "/sessions/s").json()["version"] as? Int == 1)
            let newer = try #require(storage.logs.withLock { $0["s"] })
            #expect(newer !== earlier)
            let stream = try server.subscribe("/sessions/s/events")
            #expect(try stream.nextEvent().id == "1")

            // What a refusal of the earlier log's publish, answered now, does.
            earlier.stop(because: "instance x took the session over", fenced: true)

            #expect(store.residentCount == 1, "the newer copy of the session left memory")
            #expect(storage.logs.withLock { $0["s"] } === newer)
            #expect(
                try server.request("POST", "/sessions/s/actions?wait=true", body: #"{"type":"increase"}"#).json()[
                    "version"] as? Int == 2)
            let next = try await stream.offPool { try $0.nextEvent() }
            #expect(next.event != "error" && next.id == "2", "the newer copy's stream: \(next)")
        }
    }

    // MARK: Support

    /// The instances whose fences are on session `id`'s records, oldest first.
    static func fencers(_ id: String, in server: TestServer) throws -> [String] {
        let storage = try storage(server)
        switch storage.reader.messages(on: storage.names.records(id), from: 1) {
        case .success(let messages): return messages.compactMap { NATSSessionLoader.fencer(of: $0)?.instance }
        case .failure(let error): throw TestFailure("the records of \(id) cannot be read: \(error)")
        }
    }

    /// Stores session `id` of the counter at `version` through an instance that then stops (giving its claim up).
    static func storedSession(_ place: StoragePlace, _ id: String, version: Int) throws {
        try withTemporaryDirectory("concurrent-load-c") { data in
            let c = try TestServer(storage: place) { configuration in
                configuration.storage.nats.instance = "c"
                configuration.storage.dataDir = data
            }
            defer { c.stop() }
            _ = try c.createSession("counter", id: id)
            for _ in 0..<version {
                let answer = try c.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
                #expect(answer.status == 200, "\(answer.text)")
            }
        }
    }

    /// Runs `body` with instances `a` and `b` on the place, each with a data folder of its own.
    static func withInstances(
        _ place: StoragePlace, _ body: (TestServer, TestServer) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory("concurrent-load-a") { dataA in
            try await withTemporaryDirectory("concurrent-load-b") { dataB in
                let start = { (name: String, data: String) in
                    try TestServer(storage: place) { configuration in
                        configuration.storage.nats.instance = name
                        configuration.storage.dataDir = data
                        // Nothing loads a session but the test's requests.
                        configuration.storage.checkAtStart = 0
                    }
                }
                let a = try start("a", dataA)
                defer { a.stop() }
                let b = try start("b", dataB)
                defer { b.stop() }
                try await body(a, b)
            }
        }
    }

    /// Session `id`'s claim, read from the claims bucket's leader through `server`'s storage.
    static func claim(_ id: String, in server: TestServer) throws -> OwnershipClaim? {
        switch try storage(server).claims.read(id) {
        case .success(let found): return found?.claim
        case .failure(let error): throw TestFailure("the claim of \(id) cannot be read: \(error)")
        }
    }

    static func storage(_ server: TestServer) throws -> NATSStorage {
        try #require(server.server.storage as? NATSStorage)
    }

    /// `reactor_storage_fencing_rejections_total` on `server`'s `/metrics`.
    static func fencingRejections(_ server: TestServer) throws -> Int? {
        let metrics = try server.request("GET", "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("reactor_storage_fencing_rejections_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }
}

/// Holds the loads of instances at chosen steps until the test lets each on, and records every step reached.
final class LoadChoreography: Sendable {
    /// "<instance> <step>" for every step a load reached, in order.
    let reached = Recorder<String>()
    private let gates = Mutex<[String: DispatchSemaphore]>([:])

    /// Interferes in `server`'s loads: they stop at each of `held` until ``release(_:_:)``, and their claims and
    /// fences go without their compare-and-set.
    func interfere(in server: TestServer, _ name: String, holdingAt held: Set<LoadInterference.Step>) {
        let interference = LoadInterference(dropsChecks: true) { [self] _, step in
            reached.record("\(name) \(step)")
            guard held.contains(step) else { return }
            // Bounded: a test that failed before releasing it leaves no load blocked for ever.
            _ = gate("\(name) \(step)").wait(timeout: .now() + .seconds(Int(defaultBound.components.seconds)))
        }
        (server.server.storage as? NATSStorage)?.claims.interference.withLock { $0 = interference }
    }

    /// Waits until instance `name`'s load reached `step`.
    func reach(_ name: String, _ step: LoadInterference.Step) async throws {
        let label = "\(name) \(step)"
        try await reached.waitUntil("\(name)'s load to reach \(step)") { $0.contains(label) }
    }

    /// Lets instance `name`'s load on from `step`.
    func release(_ name: String, _ step: LoadInterference.Step) {
        gate("\(name) \(step)").signal()
    }

    /// Ends the interference in every server's loads.
    func stop(_ servers: TestServer...) {
        for server in servers { (server.server.storage as? NATSStorage)?.claims.interference.withLock { $0 = nil } }
    }

    private func gate(_ label: String) -> DispatchSemaphore {
        gates.withLock { gates in
            if let gate = gates[label] { return gate }
            let gate = DispatchSemaphore(value: 0)
            gates[label] = gate
            return gate
        }
    }
}
