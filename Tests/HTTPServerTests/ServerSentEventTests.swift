import Dispatch
import HTTPServer
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ServerSentEventFramingTests {
    static let cases: [(ServerSentEvent, String)] = [
        (ServerSentEvent(data: "x"), "data: x\n\n"),
        (ServerSentEvent(event: "state", id: "7", data: "{\"a\":1}"), "event: state\nid: 7\ndata: {\"a\":1}\n\n"),
        (ServerSentEvent(data: "a\nb\r\nc\rd"), "data: a\ndata: b\ndata: c\ndata: d\n\n"),
        (ServerSentEvent(data: ""), "data: \n\n"),
        (ServerSentEvent(data: "trailing\n"), "data: trailing\ndata: \n\n"),
        (ServerSentEvent(data: "r", retry: 1500), "retry: 1500\ndata: r\n\n"),
        (ServerSentEvent(comment: "keep-alive"), ": keep-alive\n\n"),
        (ServerSentEvent(data: "d", comment: "two\nlines"), ": two\n: lines\ndata: d\n\n"),
        (ServerSentEvent(event: "bad\nname", id: "1\n2", data: "x"), "event: bad name\nid: 1 2\ndata: x\n\n"),
    ]

    @Test(arguments: cases)
    func encodesPerTheWHATWGFormat(_ event: ServerSentEvent, _ wire: String) {
        #expect(String(decoding: event.bytes, as: UTF8.self) == wire)
        #expect(EncodedServerSentEvent(event).bytes == event.bytes)
    }
}

/// An SSE app for tests: every `/events` request becomes a stream handed to the test.
final class StreamHub: HTTPResponder {
    let streams = Recorder<ServerSentEventStream>()
    let notices = Recorder<EventStreamNotice>()
    let held = Mutex<[HTTPResponseWriter]>([])
    let holding = Recorder<Int>()

    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        switch request.path {
        case "/events":
            let stream = writer.startEventStream(headers: ["X-Stream": "1"]) { [notices] notice in notices.record(notice) }
            streams.record(stream)
        case "/later-events":
            DispatchQueue.global().async { [streams, notices] in
                let stream = writer.startEventStream { notice in notices.record(notice) }
                _ = stream.send(ServerSentEvent(data: "from another thread"))
                streams.record(stream)
            }
        case "/hold":
            held.withLock { $0.append(writer) }
            holding.record(1)
        default:
            writer.respond(status: 200, body: Array("plain".utf8))
        }
    }
}

@Suite struct EventStreamTests {
    @Test func streamsFramedEventsWithKeepAliveComments() async throws {
        let hub = StreamHub()
        let clock = ManualClock()
        try await withServer(hub, clock: clock) { _, address in
            let client = try TestClient(address)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            #expect(stream.send(ServerSentEvent(event: "state", id: "1", data: "line1\nline2")) == .queued)
            let head = try client.read(until: "\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(head.contains("Content-Type: text/event-stream\r\n"))
            #expect(head.contains("Cache-Control: no-cache\r\n"))
            #expect(head.contains("X-Stream: 1\r\n"))
            #expect(!head.contains("Content-Length"))
            #expect(try client.read(until: "\n\n") == "event: state\nid: 1\ndata: line1\ndata: line2\n\n")

            clock.advance(by: .seconds(16))
            #expect(try client.read(until: "\n\n") == ": keep-alive\n\n")
            #expect(stream.send(ServerSentEvent(data: "after")) == .queued)
            #expect(try client.read(until: "\n\n") == "data: after\n\n")
        }
    }

    @Test func startsAStreamFromAnotherThread() async throws {
        let hub = StreamHub()
        try await withServer(hub) { _, address in
            let client = try TestClient(address)
            try client.send("GET /later-events HTTP/1.1\r\nHost: a\r\n\r\n")
            _ = try client.read(until: "\r\n\r\n")
            #expect(try client.read(until: "\n\n") == "data: from another thread\n\n")
        }
    }

    @Test func reportsAPeerThatCloses() async throws {
        let hub = StreamHub()
        try await withServer(hub) { _, address in
            var client: TestClient? = try TestClient(address)
            try client!.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            _ = try client!.read(until: "\r\n\r\n")
            client = nil
            let notice = try await hub.notices.next()
            #expect(notice == .closed(reason: "peer closed the stream"))
            #expect(stream.send(ServerSentEvent(data: "x")) == .closed)
        }
    }

    @Test func reportsAPeerThatResetsMidStream() async throws {
        let hub = StreamHub()
        try await withServer(hub) { _, address in
            let client = try TestClient(address)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            _ = stream.send(ServerSentEvent(data: "one"))
            _ = try client.read(until: "data: one\n\n")
            client.reset()
            guard case .closed = try await hub.notices.next() else {
                Issue.record("expected a closed notice")
                return
            }
            #expect(stream.queuedByteCount == 0)
        }
    }

    @Test func reportsOverflowAndThenDrained() async throws {
        let hub = StreamHub()
        try await withServer(hub, configure: { $0.eventStreamBufferLimit = 64 * 1024 }) { _, address in
            let client = try TestClient(address, receiveBuffer: 4096)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            let event = EncodedServerSentEvent(ServerSentEvent(data: String(repeating: "x", count: 8000)))
            var sent = 0
            var result = ServerSentEventStream.SendResult.queued
            // The client does not read, so the kernel buffers fill and the stream buffer must overflow.
            while result == .queued && sent < 100_000 {
                result = stream.send(event)
                if result == .queued { sent += 1 }
            }
            #expect(result == .overflow)
            #expect(stream.queuedByteCount <= 64 * 1024)
            _ = try client.read(until: "\r\n\r\n")
            for _ in 0..<sent { _ = try client.read(until: "\n\n") }
            #expect(try await hub.notices.next() == .drained)
            #expect(stream.send(ServerSentEvent(data: "again")) == .queued)
            #expect(try client.read(until: "\n\n") == "data: again\n\n")
        }
    }

    @Test func cutsOffASubscriberThatStopsReading() async throws {
        let hub = StreamHub()
        let clock = ManualClock()
        try await withServer(hub, clock: clock, configure: { $0.eventStreamBufferLimit = 64 * 1024 }) { _, address in
            let client = try TestClient(address, receiveBuffer: 4096)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            let event = EncodedServerSentEvent(ServerSentEvent(data: String(repeating: "x", count: 8000)))
            // Fill the stream buffer and, behind it, the kernel's socket buffers (the server
            // writes until they are full and reports `.drained`; then fill again).
            var closed: EventStreamNotice?
            for _ in 0..<200 where closed == nil {
                var sends = 0
                while stream.send(event) == .queued && sends < 10_000 { sends += 1 }
                clock.advance(by: .seconds(31))
                if let notice = try? await hub.notices.next(timeout: .milliseconds(200)), notice != .drained {
                    closed = notice
                }
            }
            #expect(closed == .closed(reason: "peer did not read for 30000 ms"))
            withExtendedLifetime(client) {}
            #expect(stream.queuedByteCount == 0)
        }
    }

    @Test func closesWithAFinalEventAndRefusesLaterSends() async throws {
        let hub = StreamHub()
        try await withServer(hub) { _, address in
            let client = try TestClient(address)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            _ = stream.send(ServerSentEvent(data: "last state"))
            stream.close(with: ServerSentEvent(event: "end", data: ""))
            #expect(stream.send(ServerSentEvent(data: "too late")) == .closed)
            _ = try client.read(until: "\r\n\r\n")
            #expect(try client.read(until: "\n\n") == "data: last state\n\n")
            #expect(try client.read(until: "\n\n") == "event: end\ndata: \n\n")
            #expect(try client.waitForClose())
        }
    }

    @Test func broadcastsOneEncodedEventToStreamsOnEveryLoop() async throws {
        let hub = StreamHub()
        try await withServer(hub, configure: { $0.loopCount = 2 }) { _, address in
            var clients: [TestClient] = []
            var streams: [ServerSentEventStream] = []
            for _ in 0..<8 {
                let client = try TestClient(address)
                try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
                clients.append(client)
                streams.append(try await hub.streams.next())
            }
            let overflowed = ServerSentEventStream.broadcast(EncodedServerSentEvent(ServerSentEvent(event: "state", id: "9", data: "{}")), to: streams)
            #expect(overflowed.isEmpty)
            for client in clients {
                _ = try client.read(until: "\r\n\r\n")
                #expect(try client.read(until: "\n\n") == "event: state\nid: 9\ndata: {}\n\n")
            }
        }
    }

    @Test func shutsDownGracefullyWithOpenStreamsAndInFlightRequests() async throws {
        let hub = StreamHub()
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.eventStreamKeepAliveInterval = .seconds(3600)  // no keep-alive comment mid-assertion on a slow run
        configuration.loopCount = 2
        let server = HTTPServer(configuration: configuration, responder: hub, logger: .disabled)
        let address = try server.start()

        let streamClient = try TestClient(address)
        try streamClient.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
        let stream = try await hub.streams.next()
        _ = try streamClient.read(until: "\r\n\r\n")
        let idle = try TestClient(address)
        try idle.send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try idle.readResponse()
        let busy = try TestClient(address)
        try busy.send("GET /hold HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try await hub.holding.next()

        server.shutdown()
        #expect(try await hub.notices.next() == .closed(reason: "server shutting down"))
        #expect(stream.send(ServerSentEvent(data: "x")) == .closed)
        #expect(try streamClient.waitForClose())
        #expect(try idle.waitForClose())
        // The in-flight request still gets its answer, marked as the connection's last.
        hub.held.withLock { $0.first!.respond(status: 200, body: Array("finished".utf8)) }
        let response = try busy.readResponse()
        #expect(response.text == "finished")
        #expect(response.header("Connection") == "close")
        server.waitUntilStopped()
        #expect(throws: (any Error).self) { _ = try TestClient(address) }
    }

    @Test func closesWhatRemainsAtTheShutdownDeadline() async throws {
        let hub = StreamHub()
        let clock = ManualClock()
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.eventStreamKeepAliveInterval = .seconds(3600)  // no keep-alive comment mid-assertion on a slow run
        configuration.loopCount = 1
        let server = HTTPServer(configuration: configuration, responder: hub, clock: clock, logger: .disabled)
        let address = try server.start()
        let busy = try TestClient(address)
        try busy.send("GET /hold HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try await hub.holding.next()
        server.shutdown()
        _ = try busy.advance(clock, by: .seconds(11))
        server.waitUntilStopped()
    }
}
