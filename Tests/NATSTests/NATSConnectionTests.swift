import Foundation
import Logs
import NATS
import ReactorServerTesting
import Synchronization
import Testing

@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct NATSConnectionTests {
    @Test func deliversMessagesWithHeadersToWildcardAndQueueSubscribers() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let publisher = try await connect(server.url)
            let subscriber = try await connect(server.url)
            defer {
                publisher.close()
                subscriber.close()
            }

            let orders = Recorder<NATSMessage>()
            _ = try subscriber.subscribe(to: "orders.*") { orders.record($0) }
            let workers = Recorder<String>()
            _ = try subscriber.subscribe(to: "jobs", queue: "workers") { _ in workers.record("a") }
            _ = try publisher.subscribe(to: "jobs", queue: "workers") { _ in workers.record("b") }
            try await subscriber.flush()
            try await publisher.flush()

            var headers: NATSHeaders = ["Trace": "t-1"]
            headers.append("Multi", "1")
            headers.append("Multi", "2")
            try publisher.publish("orders.1", payload: "first".bytes, headers: headers)
            try publisher.publish("orders.2", payload: [UInt8](), headers: nil)
            try publisher.publish("other.1", payload: "not delivered".bytes)
            try publisher.publish("orders.3", payload: "third".bytes, headers: ["Only": "header"])
            for _ in 0..<100 { try publisher.publish("jobs", payload: "job".bytes) }

            let received = try await orders.waitForCount(3, "messages on orders.*")
            #expect(received.map(\.subject) == ["orders.1", "orders.2", "orders.3"])
            #expect(
                received[0].text == "first" && received[0].headers["trace"] == "t-1"
                    && received[0].headers.values(for: "Multi") == ["1", "2"])
            #expect(received[1].payload.isEmpty && received[1].headers.isEmpty)
            #expect(received[2].headers["Only"] == "header")
            try await workers.waitForCount(100, "queue deliveries")
            try await publisher.flush()
            try await subscriber.flush()
            #expect(workers.values.count == 100, "each queued message goes to exactly one member")
            #expect(orders.values.count == 3)
        }
    }

    @Test func keepsThousandsOfRequestsInFlightAndMatchesEachReply() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let responder = try await connect(server.url)
            let client = try await connect(server.url)
            defer {
                responder.close()
                client.close()
            }
            _ = try responder.subscribe(to: "echo") { message in
                try? responder.publish(message.replyTo!, payload: message.payload + ":reply".bytes)
            }
            try await responder.flush()

            let count = 5000
            let replies = Recorder<(Int, Result<NATSMessage, NATSError>)>()
            for index in 0..<count {
                try client.request("echo", payload: String(index).bytes, timeout: .seconds(20)) {
                    replies.record((index, $0))
                }
            }
            let all = try await replies.waitForCount(count, "replies", within: .seconds(30))
            let mismatched = all.filter { index, result in (try? result.get().text) != "\(index):reply" }
            #expect(
                mismatched.isEmpty,
                "\(mismatched.count) replies failed or went to the wrong request, e.g. \(mismatched.prefix(3))")
        }
    }

    @Test func noRespondersAndTimeoutsNameTheSubjectAndTheServer() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url)
            defer { connection.close() }
            await #expect(throws: NATSError.noResponders(subject: "nobody.home", server: server.url)) {
                try await connection.request("nobody.home", payload: [UInt8]())
            }
            _ = try connection.subscribe(to: "silent") { _ in }
            try await connection.flush()
            let error = await #expect(throws: NATSError.self) {
                try await connection.request("silent", payload: [UInt8](), timeout: .milliseconds(200))
            }
            #expect(error == .timedOut(subject: "silent", server: server.url, after: .milliseconds(200)))
            #expect(error?.description.contains("silent") == true && error?.description.contains(server.url) == true)
        }
    }

    @Test func callbacksMayPublishRequestAndSubscribeWithoutDeadlock() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url)
            defer { connection.close() }
            _ = try connection.subscribe(to: "double") { message in
                let value = Int(message.text)!
                try? connection.publish(message.replyTo!, payload: String(value * 2).bytes)
            }
            let done = Recorder<Int>()
            // Each hop, inside a message handler, publishes the next hop and asks a request; the
            // request's completion (on the same thread) records it.
            _ = try connection.subscribe(to: "hop") { message in
                let value = Int(message.text)!
                do {
                    try connection.request("double", payload: String(value).bytes) { reply in
                        if case .success(let answer) = reply, Int(answer.text) == value * 2 { done.record(value) }
                    }
                    if value < 500 { try connection.publish("hop", payload: String(value + 1).bytes) }
                } catch {
                    Issue.record("publishing from a callback failed: \(error)")
                }
            }
            try connection.publish("hop", payload: "1".bytes)
            let values = try await done.waitForCount(500, "hops answered", within: .seconds(30))
            #expect(Set(values) == Set(1...500))
        }
    }

    @Test func largeMessagesSurvivePartialReadsAndWrites() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let publisher = try await connect(server.url)
            let subscriber = try await connect(server.url)
            defer {
                publisher.close()
                subscriber.close()
            }
            let maxPayload = publisher.serverInfo.maxPayload
            #expect(maxPayload == 1024 * 1024)
            let received = Recorder<NATSMessage>()
            _ = try subscriber.subscribe(to: "big") { received.record($0) }
            try await subscriber.flush()

            let size = maxPayload - 100
            for index in 0..<40 {
                try publisher.publish(
                    "big", payload: [UInt8](repeating: UInt8(index), count: size), headers: ["Index": String(index)])
            }
            let messages = try await received.waitForCount(40, "large messages", within: .seconds(60))
            for (index, message) in messages.enumerated() {
                #expect(message.headers["Index"] == String(index))
                // Compared as Data (memcmp): a byte-by-byte closure over 40 MB held a shared thread
                // for seconds in a debug build.
                #expect(
                    Data(message.payload) == Data(repeating: UInt8(index), count: size),
                    "message \(index) arrived damaged")
            }
        }
    }

    @Test func refusesWhatTheServerWouldRefuseBeforeSendingIt() async throws {
        try await NATSServerProcess.with(jetStream: false, configuration: "max_payload: 4096") { server in
            let connection = try await connect(server.url)
            defer { connection.close() }
            #expect(connection.serverInfo.maxPayload == 4096)
            #expect(throws: NATSError.payloadTooLarge(bytes: 4097, limit: 4096)) {
                try connection.publish("a", payload: [UInt8](repeating: 0, count: 4097))
            }
            #expect(throws: NATSError.self) { try connection.publish("a b", payload: [UInt8]()) }
            #expect(throws: NATSError.self) { try connection.subscribe(to: "") { _ in } }
            // Still usable afterwards.
            try connection.publish("a", payload: [UInt8](repeating: 0, count: 4096))
            try await connection.flush()
        }
    }

    @Test func unsubscribingStopsDeliveries() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url)
            defer { connection.close() }
            let received = Recorder<String>()
            let subscription = try connection.subscribe(to: "news") { received.record($0.text) }
            try connection.publish("news", payload: "one".bytes)
            try await received.waitForCount(1, "message before unsubscribing")
            subscription.unsubscribe()
            try connection.publish("news", payload: "two".bytes)
            try await connection.flush()
            // The server has processed the publish (flush), and delivers in order on this connection:
            // a delivery of "two" would have arrived before the PONG.
            #expect(received.values == ["one"])
        }
    }

    @Test func aPausedServerFillsTheOutboundBufferWhichDrainsWhenItResumes() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let publisher = try await connect(server.url) { $0.maxOutboundBytes = 256 * 1024 }
            let subscriber = try await connect(server.url)
            defer {
                publisher.close()
                subscriber.close()
            }
            let received = Recorder<Int>()
            _ = try subscriber.subscribe(to: "flood") { received.record($0.payload.count) }
            try await subscriber.flush()

            server.pause()
            var accepted = 0
            var refused: NATSError?
            while accepted < 500_000 {
                do throws(NATSError) {
                    try publisher.publish("flood", payload: [UInt8](repeating: 7, count: 1024))
                    accepted += 1
                } catch {
                    refused = error
                    break
                }
            }
            #expect(
                refused == .outboundBufferFull(limit: 256 * 1024), "the buffer must fill while the server reads nothing"
            )
            server.resume()
            try await publisher.flush(timeout: .seconds(30))
            try await received.waitForCount(
                accepted, "messages accepted before the buffer filled", within: .seconds(30))
        }
    }

    @Test func anUnresponsiveServerIsLeftAfterUnansweredPings() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url) {
                $0.pingInterval = .milliseconds(100)
                $0.maxPingsOutstanding = 2
                $0.connectTimeout = .milliseconds(500)
            }
            defer { connection.close() }
            let statuses = statusRecorder(connection)
            server.pause()
            try await statuses.waitUntil("reconnecting after unanswered PINGs") { $0.contains(.reconnecting) }
            server.resume()
            try await statuses.waitForConnected()
            let echo = try connection.subscribe(to: "after") { message in
                try? connection.publish(message.replyTo!, payload: message.payload)
            }
            #expect(try await connection.request("after", payload: "ok".bytes).text == "ok")
            echo.unsubscribe()
        }
    }

    @Test func aServerThatRequiresTLSIsRefusedClearly() async throws {
        let fake = try FakeNATSServer(greeting: "INFO {\"server_id\":\"F\",\"tls_required\":true}\r\n")
        defer { fake.stop() }
        let connection = NATSConnection(options: try NATSOptions(servers: fake.url))
        await #expect(throws: NATSError.tlsRequired(server: fake.url)) {
            try await connection.connect(timeout: .seconds(5))
        }
        #expect(connection.status == .closed)
    }

    @Test func aServerThatBreaksTheProtocolIsNotUsed() async throws {
        let fake = try FakeNATSServer(greeting: "HELLO THERE\r\n")
        defer { fake.stop() }
        let connection = NATSConnection(options: try NATSOptions(servers: fake.url))
        do {
            try await connection.connect(timeout: .milliseconds(500))
            Issue.record("connected to a server that does not speak NATS")
        } catch {
            guard case .cannotConnect(let attempts) = error else { throw error }
            #expect(attempts.contains { $0.contains(fake.url) && $0.contains("unknownOperation") }, "\(attempts)")
        }
    }

    @Test func nothingListeningFailsWithEveryAttemptNamed() async throws {
        let port = try NATSServerProcess.freePort()
        let connection = NATSConnection(options: try NATSOptions(servers: "nats://127.0.0.1:\(port)"))
        do {
            try await connection.connect(timeout: .milliseconds(300))
            Issue.record("connected to nothing")
        } catch {
            guard case .cannotConnect(let attempts) = error else { throw error }
            #expect(
                attempts.contains { $0.contains("nats://127.0.0.1:\(port)") && $0.contains("Connection refused") },
                "\(attempts)")
        }
    }

    @Test func closingFailsPendingRequestsAndLaterCalls() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            let connection = try await connect(server.url)
            _ = try connection.subscribe(to: "silent") { _ in }
            let outcome = Recorder<Result<NATSMessage, NATSError>>()
            try connection.request("silent", payload: [UInt8](), timeout: .seconds(60)) { outcome.record($0) }
            try await connection.flush()
            connection.close()
            let results = try await outcome.waitForCount(1, "the pending request to end")
            guard case .failure(.closed) = results[0] else { throw TestFailure("expected closed, got \(results[0])") }
            #expect(connection.status == .closed)
            #expect(throws: NATSError.closed) { try connection.publish("a", payload: [UInt8]()) }
        }
    }

    @Test func aClosedConnectionIsFreedEvenThoughItsHandlersCaptureIt() async throws {
        try await NATSServerProcess.with(jetStream: false) { server in
            weak var released: NATSConnection?
            do {
                let connection = try await connect(server.url)
                _ = try connection.subscribe(to: "x") { _ in try? connection.publish("y", payload: [UInt8]()) }
                connection.observeStatus { _ in _ = connection.serverInfo }
                try connection.request("x", payload: [UInt8](), timeout: .seconds(60)) { _ in _ = connection.status }
                released = connection
                connection.close()
            }
            #expect(released == nil, "a closed connection must not be kept alive by its own callbacks")
        }
    }
}
