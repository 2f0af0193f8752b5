import Foundation
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` of a real `reactor-server` process under concurrent load, then a restart on the same
/// storage (every backend): nothing a client saw (an SSE version, a 202's seq) is lost, and every state
/// is the replay of its journal.
@Suite(.offThePool) struct CrashRecoveryTests {
    static let token = "crash-admin-token"
    static let sessionCount = 20
    static let clientCount = 4

    /// What the clients of one run saw, per session.
    struct Seen {
        /// Highest SSE version seen.
        var version: [String: Int] = [:]
        /// Highest seq acknowledged with 202.
        var seq: [String: Int] = [:]
    }

    static func start(_ place: StoragePlace) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: place.arguments + ["--set", "storage.snapshotEvery=25", "--loops", "2"],
            environment: ["REACTOR_ADMIN_TOKEN": token])
    }

    /// Every backend; the file journal with each `storage.fsync` policy.
    static let backends: [TestStorage] = TestStorage.all.flatMap { storage in
        storage.name == TestStorage.file.name
            ? ["batch", "always", "never"].map { storage.with("storage.fsync", $0) } : [storage]
    }

    /// Shared by the threads of one run.
    final class Run: Sendable {
        let seen = Mutex(Seen())
        let events = Atomic<Int>(0)
        let killed = Atomic<Bool>(false)
        /// What went wrong before the kill (after it, failed requests and closed streams are expected).
        let failures = Mutex<[String]>([])

        /// Notes `failure` unless the server was already killed (then it is the kill's doing).
        func fail(_ failure: String) {
            guard !killed.load(ordering: .acquiring) else { return }
            failures.withLock { $0.append(failure) }
        }

        /// Counts one SSE event; the one that reaches `killAfter` kills the server.
        func event(killAfter: Int, pid: Int32) {
            guard events.add(1, ordering: .relaxed).newValue >= killAfter,
                killed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
            else { return }
            kill(pid, SIGKILL)
        }
    }

    /// Drives `sessions` with concurrent clients and one SSE subscriber each until the subscribers have
    /// seen `killAfter` events in all, then kills the server with SIGKILL; returns what clients saw.
    static func driveAndKill(_ server: ServerProcess, sessions: [String], killAfter: Int) async throws -> Seen {
        let run = Run()
        let group = DispatchGroup()
        let ready = DispatchSemaphore(value: 0)
        let port = server.port
        let pid = server.process.pid

        for id in sessions {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var signalled = false
                defer { if !signalled { ready.signal() } }
                do {
                    let connection = try TestClient(port: port)
                    try connection.openEventStream("/sessions/\(id)/events")
                    // Ends when the killed server's socket closes.
                    while true {
                        let event = try connection.nextEvent()
                        if !signalled {
                            signalled = true
                            ready.signal()
                        }
                        guard event.event == "state", let version = event.id.flatMap(Int.init) else { continue }
                        run.seen.withLock { $0.version[id] = max($0.version[id] ?? 0, version) }
                        run.event(killAfter: killAfter, pid: pid)
                    }
                } catch {
                    run.fail("subscriber of \(id): \(error)")
                }
            }
        }
        // Every subscriber holds its stream before the load starts, so each sees the versions it makes.
        let subscribed = try await offPool {
            sessions.allSatisfy { _ in
                ready.wait(timeout: .now() + .seconds(Int(defaultBound.components.seconds))) == .success
            }
        }
        try #require(subscribed, "the subscribers did not all open their streams within \(defaultBound)")

        for client in 0..<clientCount {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var generator = SystemRandomNumberGenerator()
                do {
                    let connection = try TestClient(port: port)
                    // Bounded so a server that never reaches the kill point still ends the test (which then fails).
                    for request in 0..<20_000 where !run.killed.load(ordering: .acquiring) {
                        let id = sessions[
                            (client + request * 7 + Int.random(in: 0..<3, using: &generator)) % sessions.count]
                        let response = try connection.request(
                            "POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#)
                        guard response.status == 202, let seq = try response.json()["seq"] as? Int else {
                            run.fail("client \(client), session \(id): \(response.status) \(response.text)")
                            return
                        }
                        run.seen.withLock { $0.seq[id] = max($0.seq[id] ?? 0, seq) }
                    }
                } catch {
                    run.fail("client \(client): \(error)")
                }
            }
        }
        let finished = try await offPool {
            group.wait(timeout: .now() + .seconds(Int(defaultBound.components.seconds)))
        }
        let reached = run.killed.load(ordering: .acquiring)
        if !reached { server.process.signal(SIGKILL) }
        #expect(finished == .success, "clients did not finish within \(defaultBound)")
        #expect(reached, "the subscribers never saw \(killAfter) events")
        #expect(run.failures.withLock { $0 } == [], "failures before the kill")
        #expect(try await server.process.waitForExit() == .signalled(SIGKILL))
        return run.seen.withLock { $0 }
    }

    /// Checks every session against what the clients saw before the kill; returns the recovered versions.
    static func verify(_ server: ServerProcess, sessions: [String], seen: Seen, previous: [String: Int]) throws
        -> [String: Int]
    {
        let admin = [("Authorization", "Bearer \(token)")]
        let connection = try TestClient(port: server.port)
        var recovered: [String: Int] = [:]
        for id in sessions {
            let session = try connection.request("GET", "/sessions/\(id)").json()
            let version = try #require(session["version"] as? Int)
            let value = try #require((session["state"] as? [String: Any])?["value"] as? Int)
            recovered[id] = version
            #expect(
                version >= seen.version[id] ?? 0,
                "session \(id) recovered version \(version) below the \(seen.version[id] ?? 0) a subscriber saw")
            #expect(
                version >= previous[id] ?? 0, "session \(id) went back from version \(previous[id] ?? 0) to \(version)")
            // Every mutation is an increase: the replayed journal's value is its version.
            #expect(value == version, "session \(id): value \(value) is not the replay of \(version) increases")
            let replayed = try connection.request("GET", "/admin/sessions/\(id)/versions/\(version)", headers: admin)
                .json()
            #expect((replayed["state"] as? [String: Any])?["value"] as? Int == value)

            var actions: [[String: Any]] = []
            var since = 0
            while true {
                let page = try connection.request("GET", "/admin/sessions/\(id)/actions?since=\(since)", headers: admin)
                    .json()
                actions += page["actions"] as? [[String: Any]] ?? []
                guard let next = page["next"] as? Int else { break }
                since = next
            }
            let seqs = actions.compactMap { $0["seq"] as? Int }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "session \(id): action log out of order")
            let lastSeq = seqs.last ?? 0
            #expect(
                lastSeq >= seen.seq[id] ?? 0,
                "session \(id): a client got 202 for seq \(seen.seq[id] ?? 0) but the log ends at \(lastSeq)")
            // A counter action is one mutation: a completed action's mutation is in the journal before it.
            let completed = actions.filter { $0["interrupted"] as? Bool != true }.count
            #expect(completed <= version, "session \(id): \(completed) completed actions but version \(version)")
            let next = try connection.request("POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#).json()
            #expect(next["seq"] as? Int == lastSeq + 1, "session \(id): seq does not continue after a restart")
        }
        return recovered
    }

    @Test(arguments: backends)
    func noVersionAClientSawIsLostToKill9(storage: TestStorage) async throws {
        try await storage.withPlace("crash-recovery") { place in
            let sessions = (0..<Self.sessionCount).map { "crash\($0)" }
            var server = try await Self.start(place)
            let setup = try TestClient(port: server.port)
            for id in sessions {
                #expect(
                    try setup.request("POST", "/sessions", body: #"{"reactor":"counter","id":"\#(id)"}"#).status == 201)
            }
            var previous: [String: Int] = [:]
            // Kill points: counts of SSE events seen, random per round.
            for round in 0..<3 {
                let killAfter = Int.random(in: (100 + 300 * round)...(1_000 + 500 * round))
                let seen = try await Self.driveAndKill(server, sessions: sessions, killAfter: killAfter)
                server = try await Self.start(place)
                previous = try Self.verify(server, sessions: sessions, seen: seen, previous: previous)
                // The verification's own POST made one more version each.
                previous = previous.mapValues { $0 + 1 }
            }
            #expect(try await server.stop() == .exited(0))
        }
    }
}
