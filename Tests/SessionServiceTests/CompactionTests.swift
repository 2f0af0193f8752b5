import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// Compaction keeps disk use bounded by snapshots and the retained action log, not by history, and
/// deleting a session removes its records from the disk.
@Suite(.offThePool) struct CompactionTests {
    static func server(_ directory: String) throws -> TestServer {
        try TestServer(dataDirectory: directory) {
            $0.storage.segmentBytes = 4096
            $0.storage.snapshotEvery = 10
            $0.sessions.actionLogLimit = 20
        }
    }

    static func diskBytes(_ directory: String) throws -> Int {
        try DurabilityTests.segments(directory).reduce(0) { total, path in
            total + ((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
    }

    /// Sends `count` increases on one keep-alive connection.
    static func increase(_ server: TestServer, _ id: String, count: Int) throws {
        let connection = try server.connect()
        for _ in 0..<count {
            let response = try connection.request("POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#)
            #expect(response.status == 202)
        }
    }

    static func actionSeqs(_ server: TestServer, _ id: String) throws -> [Int] {
        let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
        return (log["actions"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } ?? []
    }

    @Test func diskStaysBoundedWhileASessionKeepsMutating() throws {
        try withTemporaryDirectory("compaction") { directory in
            do {
                let server = try Self.server(directory)
                _ = try server.createSession("counter", id: "hot")
                var largest = 0
                var deletedAny = false
                for _ in 0..<10 {
                    try Self.increase(server, "hot", count: 100)
                    let before = try DurabilityTests.segments(directory)
                    try server.compact()
                    let after = try DurabilityTests.segments(directory)
                    deletedAny = deletedAny || Set(before).subtracting(after).count > 0
                    largest = max(largest, try Self.diskBytes(directory))
                }
                // 1,000 actions journal about 90 KB; what stays is a snapshot, the newest 20 actions and
                // the segments written since the last compaction.
                #expect(deletedAny)
                #expect(largest < 20_000, "the journal kept \(largest) bytes")
                #expect(try server.request("GET", "/sessions/hot").json()["version"] as? Int == 1000)
                #expect(try Self.actionSeqs(server, "hot") == Array(981...1000))
            }
            // The retained log and the state come back from what compaction kept.
            let server = try Self.server(directory)
            let session = try server.request("GET", "/sessions/hot").json()
            #expect(session["version"] as? Int == 1000)
            #expect((session["state"] as? [String: Any])?["value"] as? Int == 1000)
            #expect(try Self.actionSeqs(server, "hot") == Array(981...1000))
            #expect(
                try server.request("POST", "/sessions/hot/actions", body: #"{"type":"increase"}"#).json()["seq"] as? Int
                    == 1001)
        }
    }

    @Test func aPassivatedSessionKeepsItsActionLogThroughCompaction() throws {
        try withTemporaryDirectory("compaction") { directory in
            let server = try Self.server(directory)
            _ = try server.createSession("counter", id: "resting")
            try Self.increase(server, "resting", count: 30)
            #expect(server.server.service.store.passivate(idleBefore: .max) == 1)
            _ = try server.createSession("counter", id: "busy")
            try Self.increase(server, "busy", count: 200)
            try server.compact()
            #expect(!(try DurabilityTests.segments(directory).contains { $0.hasSuffix("journal-0000000001.log") }))
            #expect(try server.request("GET", "/sessions/resting").json()["version"] as? Int == 30)
            #expect(try Self.actionSeqs(server, "resting") == Array(11...30))
        }
    }

    @Test func deletingASessionDeletesItsRecordsFromTheDisk() throws {
        try withTemporaryDirectory("compaction") { directory in
            let server = try Self.server(directory)
            _ = try server.createSession("counter", id: "doomed-session")
            try Self.increase(server, "doomed-session", count: 20)
            _ = try server.createSession("counter", id: "survivor")
            let marker = Data("doomed-session".utf8)
            func mentions() throws -> Int {
                try DurabilityTests.segments(directory).filter {
                    (try Data(contentsOf: URL(fileURLWithPath: $0))).range(of: marker) != nil
                }.count
            }
            try server.syncJournal()
            #expect(try mentions() > 0)
            #expect(try server.request("DELETE", "/sessions/doomed-session").status == 204)
            #expect(
                server.logs.values.contains {
                    $0.message.contains("deleted a session; its records in the journal are erased")
                })
            // Later writes close the segments that held it; compaction then deletes them.
            try Self.increase(server, "survivor", count: 200)
            try server.compact()
            #expect(try mentions() == 0)
            #expect(try server.request("GET", "/sessions/doomed-session").status == 404)
            #expect(try server.request("GET", "/sessions/survivor").json()["version"] as? Int == 200)
        }
    }
}

extension CompactionTests {
    /// An access token's record is journaled again when compaction deletes the segment that held it, in
    /// memory or not: the token still opens its session after a restart.
    @Test func accessTokensOutliveTheSegmentsTheyWereWrittenIn() throws {
        try withTemporaryDirectory("compaction") { directory in
            // A short action log, so the segments the actions fill are mostly dead and compaction pays off.
            let configure: (inout ServerConfiguration) -> Void = {
                $0.storage.segmentBytes = 4096
                $0.storage.snapshotEvery = 10
                $0.sessions.actionLogLimit = 20
                $0.auth.sessions = "token"
            }
            let resting: String
            let resident: String
            do {
                let server = try TestServer(dataDirectory: directory, configure: configure)
                resting = try AccessModeTests.create(server, id: "resting").token
                resident = try AccessModeTests.create(server, id: "busy").token
                let connection = try server.connect()
                for _ in 0..<200 {
                    let response = try connection.request(
                        "POST", "/sessions/busy/actions", headers: [("Authorization", "Bearer \(resident)")],
                        body: #"{"type":"increase"}"#)
                    #expect(response.status == 202)
                }
                try server.compact()
                #expect(!(try DurabilityTests.segments(directory).contains { $0.hasSuffix("journal-0000000001.log") }))
            }
            let server = try TestServer(dataDirectory: directory, configure: configure)
            #expect(
                try server.request("GET", "/sessions/resting", headers: [("Authorization", "Bearer \(resting)")]).status
                    == 200)
            #expect(
                try server.request("GET", "/sessions/busy", headers: [("Authorization", "Bearer \(resident)")]).status
                    == 200)
        }
    }
}
