import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// Compaction converges: a pass runs only when it frees at least twice what it writes, so once the
/// sessions stop writing, the journal stops writing too (an idle server does not wear its disk), and
/// what a deleted session left still goes. Maintenance runs on the server's clock (every 5 s with a
/// data folder), so each tick here is one `advance`.
@Suite(.offThePool) struct CompactionConvergenceTests {
    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.storage.segmentBytes = 262_144
    }

    /// The value of an unlabelled sample on `/metrics`.
    static func metric(_ server: TestServer, _ name: String) throws -> Int {
        let text = try server.request("GET", "/metrics").text
        let lines = text.split(separator: "\n")
        let line = try #require(lines.first { $0.hasPrefix(name + " ") }, "no \(name) on /metrics")
        return try #require(Int(line.dropFirst(name.count + 1)), "\(line)")
    }

    /// Sends `count` increases to session `id`, pipelined 500 at a time on one connection.
    static func increase(_ server: TestServer, _ id: String, count: Int) throws {
        let connection = try server.connect()
        let body = #"{"type":"increase"}"#
        let request =
            "POST /sessions/\(id)/actions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        var sent = 0
        while sent < count {
            let batch = min(500, count - sent)
            try connection.send(String(repeating: request, count: batch))
            for _ in 0..<batch {
                let response = try connection.readResponse(method: "POST")
                try #require(response.status == 202, "\(response.text)")
            }
            sent += batch
        }
    }

    /// The seqs of session `id`'s action log, oldest first.
    static func actionSeqs(_ server: TestServer, _ id: String) throws -> [Int] {
        let response = try server.request("GET", "/admin/sessions/\(id)/actions?limit=100000", headers: server.admin)
        let entries = try #require(try response.json()["actions"] as? [[String: Any]], "\(response.text)")
        return entries.compactMap { $0["seq"] as? Int }
    }

    /// What the journal has written so far: all of it, and compaction's share, and its passes.
    struct Written: Equatable, CustomStringConvertible {
        var total: Int
        var compaction: Int
        var passes: Int

        init(_ server: TestServer) throws {
            total = try CompactionConvergenceTests.metric(server, "reactor_journal_written_bytes_total")
            compaction = try CompactionConvergenceTests.metric(server, "reactor_journal_compaction_written_bytes_total")
            passes = try CompactionConvergenceTests.metric(server, "reactor_journal_compactions_total")
        }

        var description: String { "\(total) bytes written (\(compaction) by compaction in \(passes) passes)" }
    }

    /// Runs `ticks` maintenance ticks with no traffic; returns what was written after each.
    static func idle(_ server: TestServer, ticks: Int) async throws -> [Written] {
        var seen: [Written] = []
        for _ in 0..<ticks {
            await server.clock.advance(by: .seconds(5))
            seen.append(try Written(server))
        }
        return seen
    }

    /// The reproduction of the issue: a retained action log of about 400 KB in checkpoint form (10,000
    /// entries) is larger than a segment. Compaction used to copy it forward at every tick, forever;
    /// now the journal stops writing within two ticks of the last action, and keeps everything.
    @Test func anIdleJournalStopsWriting() async throws {
        try await withTemporaryDirectory("compaction-idle") { directory in
            do {
                let server = try TestServer(dataDirectory: directory, configure: Self.configure)
                _ = try server.createSession("counter", id: "hot")
                try Self.increase(server, "hot", count: 12_000)
                let afterTraffic = try Written(server)
                let ticks = try await Self.idle(server, ticks: 18)
                // Two ticks (10 s) to settle, then nothing at all for the next 80 s.
                let settled = ticks[1]
                for (index, tick) in ticks.enumerated().dropFirst(2) {
                    #expect(tick == settled, "at idle tick \(index + 1): \(tick), after tick 2: \(settled)")
                }
                // It did compact (the 1 MB the actions wrote is mostly dead), and wrote at most half of
                // what it deleted: no more than the sessions themselves wrote.
                let deleted = try Self.metric(server, "reactor_journal_compaction_deleted_bytes_total")
                #expect(settled.passes >= 1, "no compaction ran: \(settled)")
                #expect(settled.compaction * 2 <= deleted, "\(settled), \(deleted) bytes deleted")
                #expect(settled.compaction <= afterTraffic.total, "\(settled); sessions wrote \(afterTraffic.total)")
                #expect(try Self.metric(server, "reactor_journal_bytes") < afterTraffic.total)
                #expect(try Self.actionSeqs(server, "hot") == Array(2001...12_000))
            }
            // Everything retained is still there after a restart, and the restarted journal is idle too.
            let server = try TestServer(dataDirectory: directory, configure: Self.configure)
            let session = try server.request("GET", "/sessions/hot").json()
            #expect(session["version"] as? Int == 12_000)
            #expect((session["state"] as? [String: Any])?["value"] as? Int == 12_000)
            #expect(try Self.actionSeqs(server, "hot") == Array(2001...12_000))
            let before = try Written(server)
            let ticks = try await Self.idle(server, ticks: 6)
            #expect(ticks.allSatisfy { $0 == before }, "after the restart: \(before), then \(ticks)")
            let next = try server.request("POST", "/sessions/hot/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(try next.json()["seq"] as? Int == 12_001)
        }
    }

    /// A deleted session's records cost compaction nothing to drop: every segment closed when it was
    /// deleted goes within a tick or two, although a live session's records share them, and then the
    /// journal is idle.
    @Test func aDeletedSessionsSegmentsStillGo() async throws {
        try await withTemporaryDirectory("compaction-deleted") { directory in
            let server = try TestServer(dataDirectory: directory, configure: Self.configure)
            _ = try server.createSession("counter", id: "kept")
            _ = try server.createSession("counter", id: "gone")
            try Self.increase(server, "kept", count: 500)
            try Self.increase(server, "gone", count: 12_000)
            try Self.increase(server, "kept", count: 500)
            _ = try await Self.idle(server, ticks: 4)
            let segmentsBefore = try DurabilityTests.segments(directory)
            let bytesBefore = try Self.metric(server, "reactor_journal_bytes")

            #expect(try server.request("DELETE", "/sessions/gone").status == 204)
            let ticks = try await Self.idle(server, ticks: 6)
            let segmentsAfter = try DurabilityTests.segments(directory)
            let bytesAfter = try Self.metric(server, "reactor_journal_bytes")
            // Only the segment open at the deletion may stay; "kept" retains about 40 KB.
            let closed = Set(segmentsBefore.dropLast())
            #expect(!closed.isEmpty && closed.isDisjoint(with: segmentsAfter), "\(segmentsBefore) → \(segmentsAfter)")
            #expect(bytesAfter < 262_144 + 65_536, "the journal holds \(bytesAfter) bytes (\(bytesBefore) before)")
            #expect(ticks.suffix(3).allSatisfy { $0 == ticks[2] }, "\(ticks)")
            #expect(try server.request("GET", "/sessions/gone").status == 404)
            #expect(try Self.actionSeqs(server, "kept") == Array(1...1_000))
        }
    }
}
