import Foundation
import Testing

@testable import SessionService

#if canImport(Glibc)
import Glibc
#endif

/// When the journal cannot be written (here: a 64 KiB file-size limit, `ulimit -f 64`), the server
/// refuses changes with 503 `storage_unavailable` and says why, keeps serving reads, and loses nothing
/// it acknowledged before the failure.
@Suite struct StorageFailureTests {
    @Test func aJournalThatCannotBeWrittenRefusesChanges() throws {
        let directory = NSTemporaryDirectory() + "storage-failure-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let binary = try ServerProcess.binary()
        var server = try ServerProcess(binary: "/bin/bash", arguments: ["-c", "ulimit -f 64 && exec \"$0\" --data-dir \"$1\" --port 0", binary, directory])
        var connection = try TestConnection(port: server.port)
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"full"}"#).status == 201)
        var acknowledged = 0
        var refusal: TestResponse?
        // About 90 bytes per action: the limit is reached within about 730.
        for _ in 0..<5_000 {
            let response = try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#)
            guard response.status == 202 else {
                refusal = response
                break
            }
            acknowledged += 1
        }
        let refused = try #require(refusal)
        #expect(refused.status == 503)
        #expect(refused.errorCode == "storage_unavailable")
        #expect(refused.errorMessage?.contains("File too large") == true, "\(refused.text)")
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"another"}"#).errorCode == "storage_unavailable")
        // Reads still work.
        let current = try connection.request("GET", "/sessions/full")
        #expect(current.status == 200)
        // The line is in the pipe before the 503 left; the reader thread may not have taken it yet.
        let line = "cannot write the journal; actions are refused with 503 storage_unavailable"
        let deadline = Date().addingTimeInterval(10)
        while !server.standardError.contains(line), Date() < deadline { sched_yield() }
        #expect(server.standardError.contains(line))
        #expect(server.stop(signal: SIGKILL) == SIGKILL)

        server = try ServerProcess(arguments: ["--data-dir", directory])
        connection = try TestConnection(port: server.port)
        let recovered = try connection.request("GET", "/sessions/full").json()
        // The action acknowledged in the loop iteration whose write failed may be the one exception:
        // its 202 was already queued when the write failed (the HTTP server cannot hold it back).
        #expect((recovered["version"] as? Int ?? 0) >= acknowledged - 1, "acknowledged \(acknowledged), recovered \(recovered)")
        #expect(try connection.request("POST", "/sessions/full/actions", body: #"{"type":"increase"}"#).status == 202)
        #expect(server.stop() == 0)
    }

    /// Writes that fail part-way (the file-size limit cuts a `write(2)` short) are cut back, and a
    /// clean shutdown while they fail leaves whole records only: nothing for the next start to cut off.
    @Test func aCleanShutdownLeavesNoPartOfARecord() throws {
        let directory = NSTemporaryDirectory() + "storage-failure-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let binary = try ServerProcess.binary()
        var server = try ServerProcess(binary: "/bin/bash", arguments: ["-c", "ulimit -f 64 && exec \"$0\" --data-dir \"$1\" --port 0", binary, directory])
        var connection = try TestConnection(port: server.port)
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"todo","id":"full"}"#).status == 201)
        var refused = false
        // Titles of odd lengths, so the limit falls inside a record rather than between two.
        for index in 0..<5_000 where !refused {
            let title = String(repeating: "x", count: 37 + index % 101)
            refused = try connection.request("POST", "/sessions/full/actions", body: #"{"type":"add","title":"\#(title)"}"#).status == 503
        }
        #expect(refused, "the file-size limit was never reached")
        #expect(server.stop() == 0)
        for segment in try DurabilityTests.segments(directory) {
            let bytes = try JournalDamageTests.bytes(segment)
            let records = JournalDamageTests.records(bytes)
            let end = records.last.map { $0.offset + $0.size } ?? 0
            #expect(end == bytes.count, "\(segment) ends \(bytes.count - end) bytes into a record")
        }
        server = try ServerProcess(arguments: ["--data-dir", directory])
        connection = try TestConnection(port: server.port)
        #expect(try connection.request("GET", "/sessions/full").status == 200)
        #expect(server.stop() == 0)
        #expect(!server.standardError.contains("cut off"), "\(server.standardError)")
    }

    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// Waits (bounded) until the server holds `count` descriptors.
    static func waitForDescriptors(_ pid: Int32, _ satisfied: (Int) -> Bool, _ what: String) throws {
        let deadline = Date().addingTimeInterval(10)
        while !satisfied(openDescriptors(pid)) {
            guard Date() < deadline else { throw TestConnection.Failure(description: "the server never held \(what) descriptors (it holds \(openDescriptors(pid)))") }
            sched_yield()
        }
    }

    /// While the server has no descriptor left (`ulimit -n`, then connections), a stored session it
    /// cannot open the journal to load answers 503 `storage_unavailable`, not 404; it is not
    /// quarantined, and loads once descriptors are free again.
    @Test func aSessionThatCannotBeReadIsA503NotA404() throws {
        let directory = NSTemporaryDirectory() + "storage-failure-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let limit = 64
        let binary = try ServerProcess.binary()
        let server = try ServerProcess(binary: "/bin/bash", arguments: ["-c", "ulimit -n \(limit) && exec \"$0\" --data-dir \"$1\" --port 0 --loops 1", binary, directory])
        let pid = server.process.processIdentifier
        let connection = try TestConnection(port: server.port)
        // A new session is journaled and leaves memory at once: its next use reads the journal.
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"kept"}"#).status == 201)
        // One connection at a time, each waited for until the server holds its descriptor.
        var others: [TestConnection] = []
        while Self.openDescriptors(pid) < limit, others.count < limit {
            let before = Self.openDescriptors(pid)
            others.append(try TestConnection(port: server.port))
            try Self.waitForDescriptors(pid, { $0 > before }, "more than \(before)")
        }

        let refused = try connection.request("GET", "/sessions/kept")
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.errorCode == "storage_unavailable")
        #expect(refused.errorMessage?.contains("Too many open files") == true, "\(refused.text)")
        #expect(try connection.request("POST", "/sessions/kept/actions", body: #"{"type":"increase"}"#).status == 503)
        #expect(try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"kept"}"#).errorCode == "session_exists")

        others = []
        try Self.waitForDescriptors(pid, { $0 < limit - 4 }, "fewer than \(limit - 4)")
        let served = try connection.request("GET", "/sessions/kept")
        #expect(served.status == 200, "\(served.text)")
        #expect(try connection.request("POST", "/sessions/kept/actions?wait=true", body: #"{"type":"increase"}"#).status == 200)
        #expect(server.stop() == 0)
    }
}
