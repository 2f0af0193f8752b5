import JSONCodec
import Logs
import NATS
import ReactorServerTesting
import Testing

@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct JetStreamTests {
    static func sessions(replicas: Int = 1) -> StreamConfig {
        var config = StreamConfig(name: "SESSIONS", subjects: ["sessions.>"], replicas: replicas)
        config.allowDirect = true
        return config
    }

    @Test func createsAndUpdatesStreamsIdempotently() async throws {
        try await withJetStream { js, _ in
            #expect(try await js.streamInfo("SESSIONS") == nil)
            let created = try await js.createOrUpdateStream(Self.sessions())
            #expect(created.name == "SESSIONS" && created.subjects == ["sessions.>"] && created.messages == 0)
            _ = try await js.publish("sessions.a", payload: "1".bytes)
            // The same configuration again changes nothing and keeps the messages.
            let again = try await js.createOrUpdateStream(Self.sessions())
            #expect(again.messages == 1 && again.lastSequence == 1)
            // A different configuration updates the stream in place.
            var changed = Self.sessions()
            changed.subjects = ["sessions.>", "owners.>"]
            changed.maxMessagesPerSubject = 10
            let updated = try await js.createOrUpdateStream(changed)
            #expect(updated.subjects == ["sessions.>", "owners.>"] && updated.messages == 1)
            #expect(updated.raw["config"]?["max_msgs_per_subject"] == .number(.int(10)))
            #expect(try await js.streamInfo("SESSIONS")?.subjects == ["sessions.>", "owners.>"])
            #expect(try await js.deleteStream("SESSIONS"))
            #expect(try await js.deleteStream("SESSIONS") == false)
        }
    }

    @Test func refusalsCarryTheJetStreamCodeAndTheServer() async throws {
        try await withJetStream { js, server in
            _ = try await js.createOrUpdateStream(Self.sessions())
            var overlapping = StreamConfig(name: "OTHER", subjects: ["sessions.a"])
            overlapping.storage = .memory
            do {
                _ = try await js.createOrUpdateStream(overlapping)
                Issue.record("a stream overlapping another was created")
            } catch let error as NATSError {
                guard case .jetStream(let refusal) = error else { throw error }
                #expect(refusal.errorCode == 10065 && refusal.code == 400)
                #expect(refusal.server == server.url && refusal.subject == "$JS.API.STREAM.CREATE.OTHER")
                #expect(
                    error.description
                        == "JetStream error 10065 (status 400) from \(server.url) on $JS.API.STREAM.CREATE.OTHER: "
                        + "subjects overlap with an existing stream"
                )
            }
            await #expect(throws: NATSError.jetStreamUnavailable(subject: "nothing.captures.this", server: server.url))
            {
                try await js.publish("nothing.captures.this", payload: "x".bytes)
            }
        }
    }

    @Test func publishesWithAcknowledgementsAndDeduplicates() async throws {
        try await withJetStream { js, _ in
            _ = try await js.createOrUpdateStream(Self.sessions())
            let first = try await js.publish(
                "sessions.a", payload: "one".bytes, headers: ["Kind": "action"],
                options: PublishOptions(messageID: "m-1"))
            #expect(first == PubAck(stream: "SESSIONS", sequence: 1, duplicate: false))
            let retry = try await js.publish(
                "sessions.a", payload: "one".bytes, options: PublishOptions(messageID: "m-1"))
            #expect(retry == PubAck(stream: "SESSIONS", sequence: 1, duplicate: true))
            let second = try await js.publish(
                "sessions.b", payload: "two".bytes, options: PublishOptions(expectedStream: "SESSIONS"))
            #expect(second.sequence == 2 && !second.duplicate)
            let stored = try #require(try await js.getMessage(stream: "SESSIONS", .sequence(1)))
            #expect(
                stored.subject == "sessions.a" && stored.payload == "one".bytes && stored.headers["Kind"] == "action"
                    && stored.headers["Nats-Msg-Id"] == "m-1")
            #expect(stored.time?.hasSuffix("Z") == true)
        }
    }

    @Test func expectedLastSubjectSequenceEnforcesOneWriterPerSubject() async throws {
        try await withJetStream { js, server in
            _ = try await js.createOrUpdateStream(Self.sessions())
            let create = try await js.publish(
                "sessions.s1", payload: "v1".bytes, options: PublishOptions(expectedLastSubjectSequence: 0))
            _ = try await js.publish("sessions.other", payload: "x".bytes)
            let next = try await js.publish(
                "sessions.s1", payload: "v2".bytes,
                options: PublishOptions(expectedLastSubjectSequence: create.sequence))
            #expect(next.sequence == 3)
            // A stale writer that still believes the last sequence is the first one is refused.
            do {
                _ = try await js.publish(
                    "sessions.s1", payload: "stale".bytes,
                    options: PublishOptions(expectedLastSubjectSequence: create.sequence))
                Issue.record("a stale expected-last-subject-sequence was accepted")
            } catch let error as NATSError {
                guard case .jetStream(let refusal) = error else { throw error }
                #expect(
                    refusal.errorCode == JetStreamAPIError.wrongLastSequence && refusal.text == "wrong last sequence: 3"
                )
                #expect(refusal.server == server.url && refusal.subject == "sessions.s1")
            }
            await #expect(throws: NATSError.self) {
                try await js.publish(
                    "sessions.s1", payload: "new".bytes, options: PublishOptions(expectedLastSubjectSequence: 0))
            }
            // The stream-wide expectation works the same way.
            let last = try await js.publish(
                "sessions.s2", payload: "y".bytes, options: PublishOptions(expectedLastSequence: 3))
            #expect(last.sequence == 4)
            do {
                _ = try await js.publish(
                    "sessions.s2", payload: "z".bytes, options: PublishOptions(expectedLastSequence: 3))
                Issue.record("a stale expected-last-sequence was accepted")
            } catch let error as NATSError {
                #expect(error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence)
            }
            #expect(try await js.streamInfo("SESSIONS")?.lastSequence == 4, "refused publishes store nothing")
        }
    }

    @Test func pipelinesThousandsOfPublishesWithAcksByCallback() async throws {
        try await withJetStream { js, _ in
            _ = try await js.createOrUpdateStream(Self.sessions())
            let count = 3000
            let acks = Recorder<Result<PubAck, NATSError>>()
            for index in 0..<count {
                try js.publish(
                    "sessions.bulk.\(index % 10)", payload: String(index).bytes,
                    options: PublishOptions(timeout: .seconds(30))
                ) { acks.record($0) }
            }
            let all = try await acks.waitForCount(count, "acknowledgements", within: .seconds(60))
            let sequences = all.compactMap { try? $0.get().sequence }
            #expect(
                sequences.count == count,
                "every publish is acknowledged: \(all.filter { (try? $0.get()) == nil }.prefix(3))")
            #expect(Set(sequences) == Set(1...UInt64(count)))
            #expect(try await js.streamInfo("SESSIONS")?.messages == UInt64(count))
        }
    }

    @Test func readsBackBySubjectWithDirectGetAndLeaderGet() async throws {
        try await withJetStream { js, _ in
            _ = try await js.createOrUpdateStream(Self.sessions())
            for (index, subject) in ["sessions.a", "sessions.b", "sessions.a", "sessions.c", "sessions.a"].enumerated()
            {
                _ = try await js.publish(
                    subject, payload: "\(subject)#\(index + 1)".bytes, headers: ["Index": String(index + 1)])
            }
            let last = try #require(try await js.directGet(stream: "SESSIONS", .lastBySubject("sessions.a")))
            #expect(last.sequence == 5 && last.payload == "sessions.a#5".bytes && last.headers["Index"] == "5")
            #expect(
                last.headers["Nats-Sequence"] == nil, "the direct-get bookkeeping headers are not the message's own")
            let next = try #require(try await js.directGet(stream: "SESSIONS", .nextBySubject("sessions.a", from: 2)))
            #expect(next.sequence == 3)
            #expect(try await js.directGet(stream: "SESSIONS", .sequence(4))?.subject == "sessions.c")
            #expect(try await js.directGet(stream: "SESSIONS", .lastBySubject("sessions.none")) == nil)
            #expect(try await js.directGet(stream: "SESSIONS", .nextBySubject("sessions.c", from: 5)) == nil)

            let replayed = try await js.directMessages(stream: "SESSIONS", subject: "sessions.a")
            #expect(replayed.map(\.sequence) == [1, 3, 5])
            #expect(
                try await js.directMessages(stream: "SESSIONS", subject: "sessions.a", from: 2).map(\.sequence) == [
                    3, 5,
                ])

            let leader = try #require(try await js.getMessage(stream: "SESSIONS", .lastBySubject("sessions.a")))
            #expect(leader.sequence == 5 && leader.payload == last.payload && leader.headers["Index"] == "5")
            #expect(try await js.getMessage(stream: "SESSIONS", .lastBySubject("sessions.none")) == nil)
        }
    }

    /// Nothing answers a direct get on a stream without `allow_direct`: nats-server 2.9 ignores it (a timeout),
    /// later releases answer "no responders" at once.
    @Test func directGetNeedsAllowDirect() async throws {
        try await withJetStream { js, server in
            _ = try await js.createOrUpdateStream(StreamConfig(name: "PLAIN", subjects: ["plain.>"]))
            _ = try await js.publish("plain.a", payload: "x".bytes)
            var impatient = js
            impatient.timeout = .milliseconds(300)
            let subject = "$JS.API.DIRECT.GET.PLAIN"
            do {
                let found = try await impatient.directGet(stream: "PLAIN", .lastBySubject("plain.a"))
                Issue.record("a direct get without allow_direct was answered: \(String(describing: found))")
            } catch {
                let expected: [NATSError] = [
                    .timedOut(subject: subject, server: server.url, after: .milliseconds(300)),
                    .jetStreamUnavailable(subject: subject, server: server.url),
                ]
                #expect((error as? NATSError).map(expected.contains) == true, "\(error)")
            }
            #expect(try await js.getMessage(stream: "PLAIN", .lastBySubject("plain.a"))?.payload == "x".bytes)
        }
    }

    @Test func replaysASubjectThroughAPullConsumerInBatches() async throws {
        try await withJetStream { js, _ in
            _ = try await js.createOrUpdateStream(Self.sessions())
            for index in 1...700 {
                _ = try await js.publish(
                    index % 3 == 0 ? "sessions.other" : "sessions.log", payload: String(index).bytes)
            }
            let all = try await js.replay(stream: "SESSIONS", subject: "sessions.log", batch: 100)
            let expected = (1...700).filter { $0 % 3 != 0 }
            #expect(all.map(\.sequence) == expected.map(UInt64.init))
            #expect(all.map(\.payload) == expected.map { String($0).bytes })
            let tail = try await js.replay(stream: "SESSIONS", subject: "sessions.log", from: 690)
            #expect(tail.map(\.sequence) == [691, 692, 694, 695, 697, 698, 700])
            #expect(try await js.replay(stream: "SESSIONS", subject: "sessions.none").isEmpty)

            let consumer = try await js.createConsumer(
                stream: "SESSIONS", ConsumerConfig(filterSubject: "sessions.other"))
            #expect(consumer.pending == 233)
            let batch = try await js.fetch(stream: "SESSIONS", consumer: consumer.name, batch: 10)
            #expect(batch.map(\.sequence) == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30])
            #expect(batch.last?.pending == 223)
            #expect(try await js.deleteConsumer(stream: "SESSIONS", name: consumer.name))
        }
    }

    @Test func purgesOneSubjectOrTheWholeStream() async throws {
        try await withJetStream { js, _ in
            _ = try await js.createOrUpdateStream(Self.sessions())
            for subject in ["sessions.a", "sessions.b", "sessions.a", "sessions.a"] {
                _ = try await js.publish(subject, payload: "x".bytes)
            }
            #expect(try await js.purgeStream("SESSIONS", subject: "sessions.a", keep: 1) == 2)
            #expect(try await js.directMessages(stream: "SESSIONS", subject: "sessions.a").map(\.sequence) == [4])
            #expect(try await js.purgeStream("SESSIONS", subject: "sessions.a") == 1)
            #expect(try await js.directMessages(stream: "SESSIONS", subject: "sessions.a").isEmpty)
            #expect(try await js.streamInfo("SESSIONS")?.messages == 1)
            #expect(try await js.purgeStream("SESSIONS") == 1)
            // Sequences continue after a purge.
            #expect(try await js.publish("sessions.a", payload: "x".bytes).sequence == 5)
        }
    }

    @Test func aServerWithoutJetStreamSaysSo() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url)
            defer { connection.close() }
            let js = JetStream(connection: connection)
            let error = await #expect(throws: NATSError.self) { try await js.accountInfo() }
            #expect(error == .jetStreamUnavailable(subject: "$JS.API.INFO", server: server.url))
            #expect(error?.description.hasPrefix("JetStream not enabled/not ready on \(server.url)") == true)
            await #expect(throws: NATSError.jetStreamUnavailable(subject: "$JS.API.INFO", server: server.url)) {
                try await js.waitUntilReady(timeout: .milliseconds(500), logger: .disabled)
            }
        }
    }

    @Test func waitsForJetStreamWithALogLineUntilAServerAppears() async throws {
        let port = try NATSServerProcess.freePort()
        var options = try NATSOptions(servers: "nats://127.0.0.1:\(port)")
        options.maxReconnectWait = .milliseconds(100)
        let connection = NATSConnection(options: options)
        connection.start()
        defer { connection.close() }
        let records = Recorder<LogRecord>()
        let logger = Logger(label: "storage", level: .info, handler: records)
        let js = JetStream(connection: connection, timeout: .milliseconds(300))
        let waiting = Task { try await js.waitUntilReady(timeout: .seconds(30), logger: logger) }
        let warning = try await records.waitForMessage(containing: "waiting for JetStream: not ready yet")
        #expect(warning.level == .warning && warning["error"]?.description.contains("no reply on $JS.API.INFO") == true)
        let server = NATSServerProcess(
            name: "late", port: port, directory: try NATSServerProcess.temporaryDirectory(),
            arguments: ["-a", "127.0.0.1", "-p", "\(port)", "-js"])
        try await server.launch()
        do {
            try await waiting.value
            try await records.waitForMessage(containing: "waiting for JetStream: done")
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}
