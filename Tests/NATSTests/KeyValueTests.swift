import JSONCodec
import NATS
import ReactorServerTesting
import Synchronization
import Testing

@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct KeyValueTests {
    func withBucket(
        _ config: KeyValueConfig = KeyValueConfig(bucket: "owners"),
        _ body: (KeyValue, JetStream, NATSServerProcess) async throws -> Void
    ) async throws {
        try await withJetStream { js, server in try await body(try await js.keyValue(config), js, server) }
    }

    @Test func aBucketIsAStreamWithTheSettingsOfTheKVSpecification() async throws {
        var config = KeyValueConfig(bucket: "owners", history: 5, ttl: .seconds(60))
        config.maxValueSize = 1024
        try await withBucket(config) { _, js, _ in
            let stream = try #require(try await js.streamInfo("KV_owners"))
            let settings = try #require(stream.raw["config"])
            #expect(stream.subjects == ["$KV.owners.>"])
            #expect(settings["max_msgs_per_subject"] == .number(.int(5)))
            #expect(
                settings["discard"] == "new" && settings["allow_rollup_hdrs"] == true && settings["deny_delete"] == true
            )
            #expect(settings["allow_direct"] == true && settings["max_msg_size"] == .number(.int(1024)))
            #expect(
                settings["max_age"] == .number(.int(60_000_000_000))
                    && settings["duplicate_window"] == .number(.int(60_000_000_000)))
            // Opening it again with the same settings is harmless.
            _ = try await js.keyValue(config)
            await #expect(throws: NATSError.self) { try await js.keyValue(KeyValueConfig(bucket: "bad.name")) }
            await #expect(throws: NATSError.self) { try await js.keyValue(KeyValueConfig(bucket: "h", history: 65)) }
        }
    }

    @Test func putsGetsAndRevisions() async throws {
        try await withBucket { kv, _, _ in
            #expect(try await kv.get("s1") == nil)
            let first = try await kv.put("s1", value: "node-a".bytes)
            let entry = try #require(try await kv.get("s1"))
            #expect(
                entry
                    == KeyValueEntry(
                        bucket: "owners", key: "s1", value: "node-a".bytes, revision: first, operation: .put))
            let second = try await kv.put("s1", value: "node-b".bytes)
            #expect(second > first)
            #expect(try await kv.get("s1", consistent: true)?.value == "node-b".bytes)
            #expect(try await kv.get("nested/key.with=chars")?.value == nil)
            _ = try await kv.put("nested/key.with=chars", value: "x".bytes)
            #expect(try await kv.get("nested/key.with=chars")?.key == "nested/key.with=chars")
            await #expect(throws: NATSError.self) { try await kv.put("bad key", value: []) }
            await #expect(throws: NATSError.self) { try await kv.put(".leading", value: []) }
        }
    }

    @Test func aWatcherReadsTheLatestOfEveryKeyThenEveryWriteInOrder() async throws {
        try await withBucket(KeyValueConfig(bucket: "owners", history: 5)) { kv, _, _ in
            _ = try await kv.put("s1", value: "old".bytes)
            _ = try await kv.put("s1", value: "a".bytes)
            _ = try await kv.put("s2", value: "b".bytes)
            _ = try await kv.delete("s2")
            let seen = Mutex<[String]>([])
            let watcher = kv.watcher { message in
                let operation = message.headers["KV-Operation"] ?? "PUT"
                seen.withLock {
                    $0.append("\(message.subject) \(operation) \(String(decoding: message.payload, as: UTF8.self))")
                }
            }
            defer { watcher.stop() }
            let caughtUp = try await offPool { watcher.startAndWaitUntilCaughtUp(within: .seconds(20)) }
            #expect(caughtUp)
            // Only each key's latest message, the delete marker included; nothing of s1's history before it.
            #expect(seen.withLock { $0 } == ["$KV.owners.s1 PUT a", "$KV.owners.s2 DEL "])
            _ = try await kv.put("s3", value: "c".bytes)
            _ = try await kv.put("s1", value: "d".bytes)
            try await eventually("the watcher to see both writes") { seen.withLock { $0.count } == 4 }
            #expect(seen.withLock { Array($0.suffix(2)) } == ["$KV.owners.s3 PUT c", "$KV.owners.s1 PUT d"])
        }
    }

    @Test func updateAndCreateRefuseAStaleRevision() async throws {
        try await withBucket { kv, _, server in
            let created = try await kv.create("s1", value: "node-a".bytes)
            do {
                _ = try await kv.create("s1", value: "node-b".bytes)
                Issue.record("create succeeded on an existing key")
            } catch let error as NATSError {
                #expect(error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence)
                #expect(
                    error.description.contains(server.url)
                        && error.description.contains("wrong last sequence: \(created)"))
            }
            let updated = try await kv.update("s1", value: "node-b".bytes, revision: created)
            // A second writer that read the first revision loses.
            do {
                _ = try await kv.update("s1", value: "node-c".bytes, revision: created)
                Issue.record("an update with a stale revision succeeded")
            } catch let error as NATSError {
                guard case .jetStream(let refusal) = error else { throw error }
                #expect(
                    refusal.errorCode == 10071 && refusal.text == "wrong last sequence: \(updated)"
                        && refusal.subject == "$KV.owners.s1")
            }
            #expect(try await kv.get("s1")?.value == "node-b".bytes)
            await #expect(throws: NATSError.self) { try await kv.update("never", value: [], revision: 7) }
        }
    }

    @Test func deletePurgeAndCreatingAgain() async throws {
        try await withBucket(KeyValueConfig(bucket: "owners", history: 10)) { kv, js, _ in
            let first = try await kv.put("s1", value: "a".bytes)
            _ = try await kv.put("s1", value: "b".bytes)
            let deleted = try await kv.delete("s1")
            #expect(try await kv.get("s1") == nil)
            #expect(try await kv.entry("s1")?.operation == .delete)
            #expect(try await kv.entry("s1")?.revision == deleted)
            #expect(
                try await js.directMessages(stream: "KV_owners", subject: "$KV.owners.s1").count == 3,
                "a delete keeps the history")
            // ADR-8: a deleted key can be created again.
            let recreated = try await kv.create("s1", value: "c".bytes)
            #expect(recreated > deleted)
            await #expect(throws: NATSError.self) { try await kv.delete("s1", revision: first) }
            _ = try await kv.purge("s1")
            #expect(try await kv.get("s1") == nil)
            #expect(try await kv.entry("s1", consistent: true)?.operation == .purge)
            #expect(
                try await js.directMessages(stream: "KV_owners", subject: "$KV.owners.s1").count == 1,
                "a purge leaves only its marker")
            #expect(try await kv.create("s1", value: "d".bytes) > recreated)
        }
    }

    @Test func completionHandlersRunOnTheConnectionsThread() async throws {
        try await withBucket { kv, _, _ in
            let outcomes = Recorder<String>()
            try kv.create("s1", value: "a".bytes) { result in
                guard case .success(let revision) = result else { return outcomes.record("create failed: \(result)") }
                do {
                    // Chained from inside a completion: never blocks, never deadlocks.
                    try kv.update("s1", value: "b".bytes, revision: revision) { second in
                        outcomes.record((try? second.get()).map { "updated \($0 > revision)" } ?? "update failed")
                        try? kv.update("s1", value: "c".bytes, revision: revision) { third in
                            outcomes.record(third.isConflict ? "stale refused" : "stale accepted")
                        }
                    }
                } catch {
                    outcomes.record("update threw \(error)")
                }
            }
            #expect(try await outcomes.waitForCount(2, "chained outcomes") == ["updated true", "stale refused"])
            let read = Recorder<String>()
            try kv.entry("s1") { read.record((try? $0.get())??.value == "b".bytes ? "b" : "?") }
            #expect(try await read.waitForCount(1, "the read") == ["b"])
        }
    }
}

extension Result where Failure == NATSError {
    /// A refused expected revision.
    var isConflict: Bool {
        if case .failure(let error) = self { return error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence }
        return false
    }
}
