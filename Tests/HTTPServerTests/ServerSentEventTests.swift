import Dispatch
import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.offThePool) struct ServerSentEventFramingTests {
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
            let stream = writer.startEventStream(headers: ["X-Stream": "1"]) { [notices] notice in
                notices.record(notice)
            }
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

@Suite(.offThePool) struct EventStreamTests {
    @Test func streamsFramedEventsWithAKeepAliveCommentAfterAQuietInterval() async throws {
        let hub = StreamHub()
        let clock = InjectedClock()
        // One loop, and a barrier after each move of the clock: the loop has run the timers due then
        // before the next event is sent.
        try await withHTTPServer(hub, clock: clock, configure: { $0.loopCount = 1 }) { _, address in
            let client = try TestClient(address)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next("the event stream to start")
            #expect(stream.send(ServerSentEvent(event: "state", id: "1", data: "line1\nline2")) == .queued)
            let head = try client.read(until: "\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(head.contains("Content-Type: text/event-stream\r\n"))
            #expect(head.contains("Cache-Control: no-cache\r\n"))
            #expect(head.contains("X-Stream: 1\r\n"))
            #expect(!head.contains("Content-Length"))
            #expect(try client.read(until: "\n\n") == "event: state\nid: 1\ndata: line1\ndata: line2\n\n")

            // Quiet for just under the 15 s interval: the next thing on the wire is the next event.
            await clock.advance(by: .milliseconds(14_900))
            try passBarrier(address)
            #expect(stream.send(ServerSentEvent(data: "two")) == .queued)
            #expect(try client.read(until: "\n\n") == "data: two\n\n")
            // The interval counts from the last event, not from the start of the stream.
            await clock.advance(by: .seconds(1))
            try passBarrier(address)
            #expect(stream.send(ServerSentEvent(data: "three")) == .queued)
            #expect(try client.read(until: "\n\n") == "data: three\n\n")
            await clock.advance(by: .milliseconds(15_100))
            #expect(try client.read(until: "\n\n") == ": keep-alive\n\n")
            #expect(stream.send(ServerSentEvent(data: "after")) == .queued)
            #expect(try client.read(until: "\n\n") == "data: after\n\n")
        }
    }

    @Test func startsAStreamFromAnotherThread() async throws {
        let hub = StreamHub()
        try await withHTTPServer(hub) { _, address in
            let client = try TestClient(address)
            try client.send("GET /later-events HTTP/1.1\r\nHost: a\r\n\r\n")
            _ = try client.read(until: "\r\n\r\n")
            #expect(try client.read(until: "\n\n") == "data: from another thread\n\n")
        }
    }

    @Test func reportsAPeerThatCloses() async throws {
        let hub = StreamHub()
        try await withHTTPServer(hub) { _, address in
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
        try await withHTTPServer(hub) { _, address in
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
        try await withHTTPServer(hub, configure: { $0.eventStreamBufferLimit = 64 * 1024 }) { _, address in
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

    @Test func cutsOffASubscriberThatStopsReadingAtTheWriteTimeout() async throws {
        let hub = StreamHub()
        let clock = InjectedClock()
        // One loop: a request on another connection is a barrier (once it is answered, the loop has
        // written what was queued before it and run the timers due at the clock's time).
        try await withHTTPServer(
            hub, clock: clock,
            configure: {
                $0.eventStreamBufferLimit = 64 * 1024
                $0.loopCount = 1
            }
        ) { _, address in
            let client = try TestClient(address, receiveBuffer: 4096)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next("the event stream to start")
            let event = EncodedServerSentEvent(ServerSentEvent(data: String(repeating: "x", count: 8000)))
            // Fill the stream buffer until the kernel's socket buffers behind it are full too: a send
            // overflows, and after the loop has written what it could, bytes are still queued.
            var full = false
            for _ in 0..<100 where !full {
                var sends = 0
                while stream.send(event) == .queued && sends < 10_000 { sends += 1 }
                for _ in 0..<2 { try passBarrier(address) }
                full = stream.queuedByteCount > 0
            }
            try #require(full, "the socket buffers never filled")
            await clock.advance(by: .milliseconds(29_900))
            for _ in 0..<2 { try passBarrier(address) }
            #expect(!hub.notices.values.contains { $0 != .drained }, "closed before the 30 s write timeout")
            await clock.advance(by: .milliseconds(200))
            let closed = try await hub.notices.next("the stream to be closed") { $0 != .drained }
            #expect(closed == .closed(reason: "peer did not read for 30000 ms"))
            withExtendedLifetime(client) {}
            #expect(stream.queuedByteCount == 0)
        }
    }

    @Test func closesWithAFinalEventAndRefusesLaterSends() async throws {
        let hub = StreamHub()
        try await withHTTPServer(hub) { _, address in
            let client = try TestClient(address)
            try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let stream = try await hub.streams.next()
            _ = stream.send(ServerSentEvent(data: "last state"))
            stream.close(with: ServerSentEvent(event: "end", data: ""))
            #expect(stream.send(ServerSentEvent(data: "too late")) == .closed)
            _ = try client.read(until: "\r\n\r\n")
            #expect(try client.read(until: "\n\n") == "data: last state\n\n")
            #expect(try client.read(until: "\n\n") == "event: end\ndata: \n\n")
            try client.readToEnd()
        }
    }

    @Test func broadcastsOneEncodedEventToStreamsOnEveryLoop() async throws {
        let hub = StreamHub()
        try await withHTTPServer(hub, configure: { $0.loopCount = 2 }) { _, address in
            var clients: [TestClient] = []
            var streams: [ServerSentEventStream] = []
            for _ in 0..<8 {
                let client = try TestClient(address)
                try client.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
                clients.append(client)
                streams.append(try await hub.streams.next())
            }
            let overflowed = ServerSentEventStream.broadcast(
                EncodedServerSentEvent(ServerSentEvent(event: "state", id: "9", data: "{}")), to: streams)
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
        // No keep-alive comment mid-assertion on a slow run.
        configuration.eventStreamKeepAliveInterval = .seconds(3600)
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
        try streamClient.readToEnd()
        try idle.readToEnd()
        // The in-flight request still gets its answer, marked as the connection's last.
        hub.held.withLock { $0.first!.respond(status: 200, body: Array("finished".utf8)) }
        let response = try busy.readResponse()
        #expect(response.text == "finished")
        #expect(response.header("Connection") == "close")
        try await waitFor("the server to stop") { try await offPool { server.waitUntilStopped() } }
        #expect(throws: (any Error).self) { _ = try TestClient(address) }
    }

    @Test func closesWhatRemainsAtTheShutdownDeadline() async throws {
        let hub = StreamHub()
        let clock = InjectedClock()
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.loopCount = 1
        let server = HTTPServer(configuration: configuration, responder: hub, clock: clock, logger: .disabled)
        let address = try server.start()
        // Held in this order: two answered before the deadline, one left for it.
        var clients: [TestClient] = []
        for count in 1...3 {
            let client = try TestClient(address)
            try client.send("GET /hold HTTP/1.1\r\nHost: a\r\n\r\n")
            try await hub.holding.waitForCount(count, "request \(count) to be held")
            clients.append(client)
        }
        server.shutdown()
        // The loop has begun shutting down (and set its deadline) once it no longer accepts.
        try await eventually("the server to stop accepting connections") { (try? TestClient(address)) == nil }
        // Just short of the 10 s deadline, work in flight still completes. The first answer may share
        // the loop's turn with the clock's move; once it is read, the loop has seen the new time, and
        // the second answer shows no connection was cut then.
        await clock.advance(by: .milliseconds(9_900))
        for index in 0..<2 {
            hub.held.withLock { $0[index].respond(status: 200, body: Array("finished \(index)".utf8)) }
            let response = try clients[index].readResponse()
            #expect(response.text == "finished \(index)")
            #expect(response.header("Connection") == "close")
        }
        // Past it, what is still unanswered gets a 503 as its last bytes, and the server stops.
        await clock.advance(by: .milliseconds(200))
        let last = try clients[2].readResponse()
        #expect(last.status == 503)
        #expect(last.header("Connection") == "close")
        #expect(try clients[2].readToEnd().isEmpty)
        try await waitFor("the server to stop at its shutdown deadline") {
            try await offPool { server.waitUntilStopped() }
        }
    }
}
