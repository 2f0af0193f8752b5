import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// Time travel's reach (`storage.historyVersions`) on the file journal: the newest N versions of every
/// session stay reachable, and forkable, through compaction, whether the session is in memory or
/// not, and across restarts; older ones go once compaction deletes their segments.
@Suite(.offThePool) struct HistoryRetentionTests {
    static func configure(historyVersions: Int) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.storage.segmentBytes = 4096
            configuration.storage.snapshotEvery = 10
            configuration.storage.historyVersions = historyVersions
            configuration.sessions.actionLogLimit = 20
        }
    }

    /// Fills the journal with another session's records, so compaction pays off and deletes every
    /// segment that was closed before; asserts that it did.
    static func compactEverythingOlder(_ server: TestServer, _ directory: String) throws {
        let before = try DurabilityTests.segments(directory)
        _ = try? server.createSession("counter", id: "filler")
        try CompactionTests.increase(server, "filler", count: 300)
        try server.compact()
        let after = Set(try DurabilityTests.segments(directory))
        #expect(before.dropLast().allSatisfy { !after.contains($0) }, "segments \(before) left \(after.sorted())")
    }

    /// Each version from `first` through `last` answers the value a subscriber saw then.
    static func expectReachable(
        _ server: TestServer, _ seen: [Int: Int], _ versions: ClosedRange<Int>, _ when: String
    ) throws {
        for version in versions {
            let response = try TimeTravelTests.state(server, "kept", at: version)
            #expect(response.status == 200, "version \(version) \(when): \(response.text)")
            let value = (try? response.json()["state"] as? [String: Any])?["value"] as? Int
            #expect(value == seen[version], "version \(version) \(when)")
        }
    }

    @Test func theNewestVersionsOutliveCompactionInMemoryAndAfterARestart() throws {
        try withTemporaryDirectory("history") { directory in
            let configure = Self.configure(historyVersions: 40)
            let seen: [Int: Int]
            do {
                let server = try TestServer(dataDirectory: directory, configure: configure)
                seen = try TimeTravelTests.history(server, "kept", steps: 150)
                // In memory: compaction copies its history forward before its checkpoint.
                try Self.compactEverythingOlder(server, directory)
                try Self.expectReachable(server, seen, 111...150, "after compaction, in memory")
            }
            // After a restart nothing of it is in memory: compaction copies its stored records.
            let server = try TestServer(dataDirectory: directory, configure: configure)
            try Self.compactEverythingOlder(server, directory)
            try Self.expectReachable(server, seen, 111...150, "after a restart and compaction")
            // The base snapshot kept is at or below version 111 (snapshots every 10): nothing older.
            let gone = try TimeTravelTests.state(server, "kept", at: 100)
            #expect(gone.status == 410, "\(gone.text)")
            #expect(gone.errorCode == "version_gone")
            #expect(gone.errorMessage?.contains("storage.historyVersions") == true, "\(gone.text)")
            let body = #"{"version":111,"id":"branch"}"#
            let fork = try server.request("POST", "/admin/sessions/kept/fork", headers: server.admin, body: body)
            #expect(fork.status == 201, "\(fork.text)")
            #expect((try fork.json()["state"] as? [String: Any])?["value"] as? Int == seen[111])
        }
    }

    /// With 0, as before the setting: compaction keeps the latest snapshot and what follows it.
    @Test func zeroKeepsOnlyTheLatestSnapshotAndWhatFollows() throws {
        try withTemporaryDirectory("history-off") { directory in
            let server = try TestServer(dataDirectory: directory, configure: Self.configure(historyVersions: 0))
            let seen = try TimeTravelTests.history(server, "kept", steps: 150)
            try Self.compactEverythingOlder(server, directory)
            let gone = try TimeTravelTests.state(server, "kept", at: 141)
            #expect(gone.status == 410, "\(gone.text)")
            try Self.expectReachable(server, seen, 150...150, "at the latest snapshot")
        }
    }
}
