import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

#if canImport(Glibc)
import Glibc
#endif

/// When the journal cannot be written (here: a 64 KiB file-size limit, `ulimit -S -f 64`), the answer
/// to the action whose record failed to be written is held, never sent as an acknowledgement: it goes
/// out once a retry writes the record, or its connection closes unanswered after
/// `http.writeTimeoutSeconds`. Meanwhile the server refuses changes with 503 `storage_unavailable` and
/// says why, keeps serving what is stored, and loses nothing it acknowledged; once the journal can be
/// written again (the limit raised with `prlimit`), it recovers without a restart.
@Suite struct StorageFailureTests {
    static let token = "storage-failure-token"
    static var admin: [(String, String)] { [("Authorization", "Bearer \(token)")] }
    /// Logged once when a write fails.
    static let failureLine = "cannot write the journal; actions are refused with 503 storage_unavailable"

    /// A server whose journal files may not grow past 64 KiB until the test raises the (soft) limit.
    static func start(_ directory: String, _ settings: [String] = []) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: ["--data-dir", directory] + settings.flatMap { ["--set", $0] }, environment: ["REACTOR_ADMIN_TOKEN": token], shell: "ulimit -S -f 64")
    }

    /// What became of one request: its answer, or held (no answer, and the journal's write failed).
    enum Outcome {
        case answered(TestResponse)
        case held
    }

    /// Sends `request` on `connection` and waits, bounded, until its answer arrives or the server logs
    /// that the journal cannot be written while none has (the answer is then held).
    static func answerOrHeld(_ server: ServerProcess, _ connection: TestClient, _ request: String) async throws -> Outcome {
        // Bounded by the loop below: each turn waits on the socket for 20 ms at most.
        try connection.send(request)
        let started = ContinuousClock.now
        while ContinuousClock.now - started < defaultBound {
            let failed = server.standardError.contains(Self.failureLine)
            var descriptor = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            // A failure seen before this poll: an answer that did come is readable at once.
            if poll(&descriptor, 1, failed ? 0 : 20) > 0 { return .answered(try connection.readResponse()) }
            if failed { return .held }
            await Task.yield()
        }
        throw TestFailure("waited \(defaultBound) for an answer or the journal's write failure; neither came")
    }

    static func increase(_ session: String) -> String {
        "POST /sessions/\(session)/actions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 19\r\n\r\n{\"type\":\"increase\"}"
    }

    /// Starts such a server with sessions "other" and "full" and sends increases to "full" until the
    /// answer to one is held; returns how many were acknowledged before it, and its connection.
    static func startAndFill(_ directory: String, _ settings: [String] = []) async throws -> (server: ServerProcess, connection: TestClient, acknowledged: Int) {
        let server = try await start(directory, settings)
        let connection = try server.client()
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"other"}"#).status == 201)
        // Read once, so it is in memory: a stored session cannot be loaded while the journal fails.
        #expect(try connection.request("GET", "/sessions/other").status == 200)
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"full"}"#).status == 201)
        // About 90 bytes per action: the limit is reached within about 730.
        for acknowledged in 0..<5_000 {
            switch try await answerOrHeld(server, connection, increase("full")) {
            case .held: return (server, connection, acknowledged)
            case .answered(let response):
                guard response.status == 202 else { throw TestFailure("action \(acknowledged + 1) answered \(response.status) \(response.text)") }
            }
        }
        throw TestFailure("5,000 actions were accepted under a 64 KiB file-size limit")
    }

    @Test func anActionWhoseRecordCannotBeWrittenIsNeverAcknowledged() async throws {
        try await withTemporaryDirectory("storage-failure") { directory in
            var (server, held, acknowledged) = try await Self.startAndFill(directory, ["http.writeTimeoutSeconds=2"])
            let connection = try server.client()
            let refused = try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#)
            #expect(refused.status == 503)
            #expect(refused.errorCode == "storage_unavailable")
            #expect(refused.errorMessage?.contains("File too large") == true, "\(refused.text)")
            #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"another"}"#).errorCode == "storage_unavailable")
            // What is stored can still be read (a session in memory); "full" now shows a version whose
            // record is not, so its reads wait like its action's answer.
            #expect(try connection.request("GET", "/sessions/other").status == 200)
            // The held answer never comes: its connection closes unanswered at the write timeout.
            let rest = try held.readToEnd()
            #expect(rest.isEmpty, "the action whose record was not written was answered: \(String(decoding: rest, as: UTF8.self))")
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

            server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            let restarted = try server.client()
            let recovered = try #require(try restarted.request("GET", "/sessions/full").json()["version"] as? Int)
            // Every action answered 202 survives.
            #expect(recovered >= acknowledged, "acknowledged \(acknowledged), recovered \(recovered)")
            #expect(try restarted.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status == 202)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test func aJournalWritableAgainRecoversWithoutARestart() async throws {
        try await withTemporaryDirectory("storage-recovery") { directory in
            var (server, held, before) = try await Self.startAndFill(directory)
            let connection = try server.client()
            // While failing: no fork, and the health check tells a load balancer to look elsewhere.
            let fork = try connection.request("POST", "/admin/sessions/full/fork", headers: Self.admin, body: #"{"version":1,"id":"branch"}"#)
            #expect(fork.status == 503)
            #expect(fork.errorCode == "storage_unavailable")
            let unhealthy = try connection.request("GET", "/healthz")
            #expect(unhealthy.status == 503)
            #expect(unhealthy.errorCode == "storage_unavailable")

            let raised = try await TestProcess.run(TestProcess.tool("prlimit"), ["--pid", "\(server.process.pid)", "--fsize=unlimited"])
            try #require(raised.termination == .exited(0), "prlimit: \(raised.error)")
            // The journal retries the failed write by itself; once it is written, the held answer leaves.
            let released = try held.readResponse()
            #expect(released.status == 202, "\(released.text)")
            try await server.process.errorLines.next("the journal to be writable again") { $0.contains("the journal is writable again") }
            #expect(try connection.request("GET", "/healthz").status == 200)
            var after = 0
            for _ in 0..<10 {
                #expect(try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status == 202)
                after += 1
            }
            let forked = try connection.request("POST", "/admin/sessions/full/fork", headers: Self.admin, body: #"{"version":1,"id":"branch"}"#)
            #expect(forked.status == 201)

            // Everything acknowledged, before the failure, the held action and after, is in the journal.
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))
            server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            let restarted = try server.client()
            let version = try #require(try restarted.request("GET", "/sessions/full").json()["version"] as? Int)
            #expect(version == before + 1 + after, "acknowledged \(before) + 1 + \(after), recovered version \(version)")
            #expect(try restarted.request("GET", "/sessions/branch").json()["version"] as? Int == 1)
            #expect(try await server.stop() == .exited(0))
        }
    }

    /// Writes that fail part-way (the file-size limit cuts a `write(2)` short) are cut back, and a
    /// clean shutdown while they fail leaves whole records only: nothing for the next start to cut off.
    @Test func aCleanShutdownLeavesNoPartOfARecord() async throws {
        try await withTemporaryDirectory("storage-failure") { directory in
            var server = try await Self.start(directory, ["http.writeTimeoutSeconds=2", "http.shutdownDeadlineSeconds=1"])
            var connection = try server.client()
            #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"todo","id":"full"}"#).status == 201)
            var held = false
            // Titles of odd lengths, so the limit falls inside a record rather than between two.
            for index in 0..<5_000 where !held {
                let title = String(repeating: "x", count: 37 + index % 101)
                let body = #"{"type":"add","title":"\#(title)"}"#
                let request = "POST /sessions/full/actions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                if case .held = try await Self.answerOrHeld(server, connection, request) { held = true }
            }
            #expect(held, "the file-size limit was never reached")
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
