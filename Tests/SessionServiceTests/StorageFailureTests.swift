import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

#if canImport(Glibc)
    import Glibc
#endif

/// When the journal cannot be written (here: a 64 KiB file-size limit, `ulimit -S -f 64`), the answer
/// to the action whose records failed to be written is never sent: a 503 `storage_unavailable` goes in
/// its place (the action takes effect only if a retry stores it). Meanwhile the server refuses changes
/// with 503 and says why, keeps serving what is stored, and loses nothing it acknowledged; once the
/// journal can be written again (the limit raised with `prlimit`), it recovers without a restart.
@Suite(.offThePool) struct StorageFailureTests {
    static let token = "storage-failure-token"
    static var admin: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A server whose journal files may not grow past 64 KiB until the test raises the (soft) limit.
    static func start(_ directory: String, _ settings: [String] = []) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: ["--data-dir", directory] + settings.flatMap { ["--set", $0] },
            environment: ["REACTOR_ADMIN_TOKEN": token], shell: "ulimit -S -f 64")
    }

    /// What the filling left: the server, the highest version and every `seq` acknowledged, and the
    /// refusal of the action whose records could not be written.
    struct Filled {
        var server: ServerProcess
        var acknowledgedVersion: Int
        var acknowledgedSeqs: [Int]
        var refusal: TestResponse
    }

    /// Starts such a server with sessions "other" and "full" and sends increases to "full" with
    /// `?wait=true` (each answer acknowledges the action and the version it made) until one is refused.
    static func startAndFill(_ directory: String, _ settings: [String] = []) async throws -> Filled {
        let server = try await start(directory, settings)
        let connection = try server.client()
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"other"}"#).status == 201)
        // Read once, so it is in memory: a stored session cannot be loaded while the journal fails.
        #expect(try connection.request("GET", "/sessions/other").status == 200)
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"full"}"#).status == 201)
        var version = 0
        var seqs: [Int] = []
        // About 90 bytes per action: the limit is reached within about 730.
        for _ in 0..<5_000 {
            let response = try connection.request(
                "POST", "/sessions/full/actions?wait=true", body: #"{"type":"increase"}"#)
            guard response.status == 200 else {
                return Filled(server: server, acknowledgedVersion: version, acknowledgedSeqs: seqs, refusal: response)
            }
            let json = try response.json()
            version = try #require(json["version"] as? Int)
            seqs.append(try #require(json["seq"] as? Int))
        }
        throw TestFailure("5,000 actions were accepted under a 64 KiB file-size limit")
    }

    /// The `seq` of every action in the stored action log of `session`.
    static func loggedSeqs(_ connection: TestClient, _ session: String) throws -> Set<Int> {
        let log = try connection.request("GET", "/admin/sessions/\(session)/actions", headers: admin)
        let entries = try #require(log.json()["actions"] as? [[String: Any]], "\(log.text)")
        return Set(entries.compactMap { $0["seq"] as? Int })
    }

    @Test func anActionWhoseRecordsCannotBeWrittenIsRefusedNotAcknowledged() async throws {
        try await withTemporaryDirectory("storage-failure") { directory in
            let filled = try await Self.startAndFill(directory, ["http.writeTimeoutSeconds=2"])
            var server = filled.server
            // The answer that would have acknowledged it is replaced, and says why.
            #expect(filled.refusal.status == 503)
            #expect(filled.refusal.errorCode == "storage_unavailable")
            #expect(filled.refusal.errorMessage?.contains("not acknowledged") == true, "\(filled.refusal.text)")
            #expect(filled.refusal.errorMessage?.contains("File too large") == true, "\(filled.refusal.text)")
            let connection = try server.client()
            let refused = try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#)
            #expect(refused.status == 503)
            #expect(refused.errorCode == "storage_unavailable")
            #expect(refused.errorMessage?.contains("File too large") == true, "\(refused.text)")
            #expect(
                try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"another"}"#).errorCode
                    == "storage_unavailable")
            // What is stored can still be read (a session in memory).
            #expect(try connection.request("GET", "/sessions/other").status == 200)
            // The replaced answer is counted apart (the request counter has the status the route chose).
            let metrics = try connection.request("GET", "/metrics").text
            #expect(
                metrics.contains("\nreactor_answers_not_stored_total 1\n"),
                "\(metrics.split(separator: "\n").filter { $0.contains("not_stored") })")
            // "full" shows a version whose records are not stored: its read is refused at once, never shown
            // (DiskFullReadTests has every read route).
            let unstored = try server.client().request("GET", "/sessions/full")
            #expect(unstored.status == 503, "a version whose records are not stored was shown: \(unstored.text)")
            #expect(unstored.errorCode == "storage_unavailable")
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

            server = try await ServerProcess.start(
                arguments: ["--data-dir", directory], environment: ["REACTOR_ADMIN_TOKEN": Self.token])
            let restarted = try server.client()
            let recovered = try #require(try restarted.request("GET", "/sessions/full").json()["version"] as? Int)
            // Every acknowledged version and action survives.
            #expect(
                recovered >= filled.acknowledgedVersion,
                "acknowledged version \(filled.acknowledgedVersion), recovered \(recovered)")
            let logged = try Self.loggedSeqs(restarted, "full")
            let lost = filled.acknowledgedSeqs.filter { !logged.contains($0) }
            #expect(lost.isEmpty, "acknowledged actions missing from the log after the restart: \(lost)")
            #expect(
                try restarted.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status == 202)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test func aJournalWritableAgainRecoversWithoutARestart() async throws {
        try await withTemporaryDirectory("storage-recovery") { directory in
            let filled = try await Self.startAndFill(directory)
            var server = filled.server
            #expect(filled.refusal.errorCode == "storage_unavailable", "\(filled.refusal.text)")
            let connection = try server.client()
            // While failing: no fork, and the health check tells a load balancer to look elsewhere.
            let fork = try connection.request(
                "POST", "/admin/sessions/full/fork", headers: Self.admin, body: #"{"version":1,"id":"branch"}"#)
            #expect(fork.status == 503)
            #expect(fork.errorCode == "storage_unavailable")
            let unhealthy = try connection.request("GET", "/healthz")
            #expect(unhealthy.status == 503)
            #expect(unhealthy.errorCode == "storage_unavailable")

            let raised = try await TestProcess.run(
                TestProcess.tool("prlimit"), ["--pid", "\(server.process.pid)", "--fsize=unlimited"])
            try #require(raised.termination == .exited(0), "prlimit: \(raised.error)")
            // The journal retries the failed write by itself, with no request to trigger it.
            try await server.process.errorLines.next("the journal to be writable again") {
                $0.contains("the journal is writable again")
            }
            #expect(try connection.request("GET", "/healthz").status == 200)
            // The refused action was stored by the retry, as its 503 said it would be if one succeeded.
            let current = try #require(try connection.request("GET", "/sessions/full").json()["version"] as? Int)
            #expect(
                current == filled.acknowledgedVersion + 1, "acknowledged \(filled.acknowledgedVersion), now \(current)")
            for _ in 0..<10 {
                #expect(
                    try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status
                        == 202)
            }
            let last = try connection.request("POST", "/sessions/full/actions?wait=true", body: #"{"type":"increase"}"#)
            let acknowledged = try #require(try last.json()["version"] as? Int, "\(last.text)")
            let forked = try connection.request(
                "POST", "/admin/sessions/full/fork", headers: Self.admin, body: #"{"version":1,"id":"branch"}"#)
            #expect(forked.status == 201)

            // Everything acknowledged, before the failure, the retried action and after, is in the journal.
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))
            server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            let restarted = try server.client()
            let version = try #require(try restarted.request("GET", "/sessions/full").json()["version"] as? Int)
            #expect(version == acknowledged, "acknowledged version \(acknowledged), recovered \(version)")
            #expect(acknowledged == filled.acknowledgedVersion + 12)
            #expect(try restarted.request("GET", "/sessions/branch").json()["version"] as? Int == 1)
            #expect(try await server.stop() == .exited(0))
        }
    }

    /// Writes that fail part-way (the file-size limit cuts a `write(2)` short) are cut back, and a
    /// clean shutdown while they fail leaves whole records only: nothing for the next start to cut off.
    @Test func aCleanShutdownLeavesNoPartOfARecord() async throws {
        try await withTemporaryDirectory("storage-failure") { directory in
            var server = try await Self.start(directory)
            var connection = try server.client()
            #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"todo","id":"full"}"#).status == 201)
            var refused = false
            // Titles of odd lengths, so the limit falls inside a record rather than between two.
            for index in 0..<5_000 where !refused {
                let title = String(repeating: "x", count: 37 + index % 101)
                refused =
                    try connection.request(
                        "POST", "/sessions/full/actions", body: #"{"type":"add","title":"\#(title)"}"#
                    ).status == 503
            }
            #expect(refused, "the file-size limit was never reached")
            #expect(try await server.stop() == .exited(0))
            for segment in try DurabilityTests.segments(directory) {
                let bytes = try JournalDamageTests.bytes(segment)
                let records = JournalDamageTests.records(bytes)
                let end = records.last.map { $0.offset + $0.size } ?? 0
                #expect(end == bytes.count, "\(segment) ends \(bytes.count - end) bytes into a record")
            }
            server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            connection = try server.client()
            #expect(try connection.request("GET", "/sessions/full").status == 200)
            #expect(try await server.stop() == .exited(0))
            #expect(!server.standardError.contains("cut off"), "\(server.standardError)")
        }
    }

    /// How many of the descriptor numbers below `limit` the process uses. Numbers above it (inherited
    /// from the parent before the limit was lowered) do not count: only a free number below it lets an
    /// `open` succeed.
    static func usedDescriptors(_ pid: Int32, below limit: Int) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return names.compactMap(Int.init).filter { $0 < limit }.count
    }

    /// While the server has no descriptor left (`ulimit -n`, then connections), a stored session it
    /// cannot open the journal to load answers 503 `storage_unavailable`, not 404; it is not
    /// quarantined, and loads once descriptors are free again.
    @Test func aSessionThatCannotBeReadIsA503NotA404() async throws {
        try await withTemporaryDirectory("storage-descriptors") { directory in
            let limit = 64
            // Connections that send nothing stay open for the whole test, and no sync thread borrows a
            // descriptor now and then (fsync batch syncs through a duplicate).
            // No connection cap either: by default it keeps a reserve of 16 of the 64 descriptors, so
            // how close the connections came to the limit depended on how many the server held at start.
            let patient = [
                "--set", "http.headTimeoutSeconds=3600", "--set", "http.idleTimeoutSeconds=3600", "--set",
                "storage.fsync=never",
                "--set", "http.maxConnections=1000",
            ]
            let server = try await ServerProcess.start(
                arguments: ["--data-dir", directory, "--loops", "1"] + patient, shell: "ulimit -n \(limit)")
            let pid = server.process.pid
            let connection = try server.client()
            // A new session is journaled and leaves memory at once: its next use reads the journal.
            #expect(
                try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"kept"}"#).status == 201)
            // One connection at a time, each waited for until the server holds its descriptor.
            var others: [TestClient] = []
            while Self.usedDescriptors(pid, below: limit) < limit, others.count < limit {
                let before = Self.usedDescriptors(pid, below: limit)
                others.append(try server.client())
                try await eventually("the server to accept connection \(others.count) (it holds \(before) descriptors)")
                { Self.usedDescriptors(pid, below: limit) > before }
            }

            let refused = try connection.request("GET", "/sessions/kept")
            #expect(refused.status == 503, "\(refused.text)")
            #expect(refused.errorCode == "storage_unavailable")
            #expect(refused.errorMessage?.contains("Too many open files") == true, "\(refused.text)")
            #expect(
                try connection.request("POST", "/sessions/kept/actions", body: #"{"type":"increase"}"#).status == 503)
            #expect(
                try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"kept"}"#).errorCode
                    == "session_exists")

            others = []
            try await eventually("the server to close the other connections") {
                Self.usedDescriptors(pid, below: limit) < limit - 4
            }
            let served = try connection.request("GET", "/sessions/kept")
            #expect(served.status == 200, "\(served.text)")
            #expect(
                try connection.request("POST", "/sessions/kept/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            #expect(try await server.stop() == .exited(0))
        }
    }
}
