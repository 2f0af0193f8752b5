import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

#if canImport(Glibc)
import Glibc
#endif

/// When the journal cannot be written (here: a 64 KiB file-size limit, `ulimit -S -f 64`), the server
/// refuses changes with 503 `storage_unavailable` and says why, keeps serving reads, and loses nothing it
/// acknowledged before the failure; once the journal can be written again (the limit raised with
/// `prlimit`), it recovers without a restart.
@Suite struct StorageFailureTests {
    static let token = "storage-failure-token"
    static var admin: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A server whose journal files may not grow past 64 KiB until the test raises the (soft) limit.
    static func start(_ directory: String) async throws -> ServerProcess {
        try await ServerProcess.start(arguments: ["--data-dir", directory], environment: ["REACTOR_ADMIN_TOKEN": token], shell: "ulimit -S -f 64")
    }

    /// Starts such a server with session "full" and sends increases until one is refused; returns how
    /// many were acknowledged before, and the refusal.
    static func startAndFill(_ directory: String) async throws -> (server: ServerProcess, connection: TestClient, acknowledged: Int, refusal: TestResponse) {
        let server = try await start(directory)
        let connection = try server.client()
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"full"}"#).status == 201)
        // About 90 bytes per action: the limit is reached within about 730.
        for acknowledged in 0..<5_000 {
            let response = try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#)
            if response.status != 202 { return (server, connection, acknowledged, response) }
        }
        throw TestFailure("5,000 actions were accepted under a 64 KiB file-size limit")
    }

    @Test func aJournalThatCannotBeWrittenRefusesChangesAndKeepsWhatItAcknowledged() async throws {
        try await withTemporaryDirectory("storage-failure") { directory in
            var (server, connection, acknowledged, refused) = try await Self.startAndFill(directory)
            #expect(refused.status == 503)
            #expect(refused.errorCode == "storage_unavailable")
            #expect(refused.errorMessage?.contains("File too large") == true, "\(refused.text)")
            #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"another"}"#).errorCode == "storage_unavailable")
            // Reads still work.
            #expect(try connection.request("GET", "/sessions/full").status == 200)
            try await server.process.errorLines.next("the failure to be logged") {
                $0.contains("cannot write the journal; actions are refused with 503 storage_unavailable")
            }
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

            server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            connection = try server.client()
            let recovered = try #require(try connection.request("GET", "/sessions/full").json()["version"] as? Int)
            // All but the action whose own write failed survive: its 202 was already queued when the
            // write failed in the output hook, and the HTTP layer cannot hold queued output back.
            #expect(recovered >= acknowledged - 1, "acknowledged \(acknowledged), recovered \(recovered)")
            withKnownIssue("a 202 leaves for the action whose journal write failed; fixing it needs an output hook that can hold a response back") {
                #expect(recovered >= acknowledged, "acknowledged \(acknowledged), recovered \(recovered)")
            }
            #expect(try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status == 202)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test func aJournalWritableAgainRecoversWithoutARestart() async throws {
        try await withTemporaryDirectory("storage-recovery") { directory in
            var (server, connection, before, _) = try await Self.startAndFill(directory)
            // While failing: no fork, and the health check tells a load balancer to look elsewhere.
            let fork = try connection.request("POST", "/admin/sessions/full/fork", headers: Self.admin, body: #"{"version":1,"id":"branch"}"#)
            #expect(fork.status == 503)
            #expect(fork.errorCode == "storage_unavailable")
            let unhealthy = try connection.request("GET", "/healthz")
            #expect(unhealthy.status == 503)
            #expect(unhealthy.errorCode == "storage_unavailable")

            let raised = try await TestProcess.run(TestProcess.tool("prlimit"), ["--pid", "\(server.process.pid)", "--fsize=unlimited"])
            try #require(raised.termination == .exited(0), "prlimit: \(raised.error)")
            // The next output retries the failed write.
            _ = try connection.request("GET", "/sessions/full")
            try await server.process.errorLines.next("the journal to be writable again") { $0.contains("the journal is writable again") }
            #expect(try connection.request("GET", "/healthz").status == 200)
            var after = 0
            for _ in 0..<10 {
                #expect(try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status == 202)
                after += 1
            }
            let forked = try connection.request("POST", "/admin/sessions/full/fork", headers: Self.admin, body: #"{"version":1,"id":"branch"}"#)
            #expect(forked.status == 201)

            // Everything acknowledged, before the failure and after it, is in the journal; the action
            // whose write failed was written by the retry.
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))
            server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            let restarted = try server.client()
            let version = try #require(try restarted.request("GET", "/sessions/full").json()["version"] as? Int)
            #expect(version == before + after, "acknowledged \(before) + \(after), recovered version \(version)")
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
                refused = try connection.request("POST", "/sessions/full/actions", body: #"{"type":"add","title":"\#(title)"}"#).status == 503
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
            let patient = ["--set", "http.headTimeoutSeconds=3600", "--set", "http.idleTimeoutSeconds=3600", "--set", "storage.fsync=never"]
            let server = try await ServerProcess.start(arguments: ["--data-dir", directory, "--loops", "1"] + patient, shell: "ulimit -n \(limit)")
            let pid = server.process.pid
            let connection = try server.client()
            // A new session is journaled and leaves memory at once: its next use reads the journal.
            #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"kept"}"#).status == 201)
            // One connection at a time, each waited for until the server holds its descriptor.
            var others: [TestClient] = []
            while Self.usedDescriptors(pid, below: limit) < limit, others.count < limit {
                let before = Self.usedDescriptors(pid, below: limit)
                others.append(try server.client())
                try await eventually("the server to accept connection \(others.count) (it holds \(before) descriptors)") { Self.usedDescriptors(pid, below: limit) > before }
            }

            let refused = try connection.request("GET", "/sessions/kept")
            #expect(refused.status == 503, "\(refused.text)")
            #expect(refused.errorCode == "storage_unavailable")
            #expect(refused.errorMessage?.contains("Too many open files") == true, "\(refused.text)")
            #expect(try connection.request("POST", "/sessions/kept/actions", body: #"{"type":"increase"}"#).status == 503)
            #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"kept"}"#).errorCode == "session_exists")

            others = []
            try await eventually("the server to close the other connections") { Self.usedDescriptors(pid, below: limit) < limit - 4 }
            let served = try connection.request("GET", "/sessions/kept")
            #expect(served.status == 200, "\(served.text)")
            #expect(try connection.request("POST", "/sessions/kept/actions?wait=true", body: #"{"type":"increase"}"#).status == 200)
            #expect(try await server.stop() == .exited(0))
        }
    }
}
