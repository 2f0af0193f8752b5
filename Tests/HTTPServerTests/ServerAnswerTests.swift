import Dispatch
import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the server answers by itself (timeouts, a dropped request, shutdown) goes through the
/// responder's `response(for:)`, like the parser's rejections; HEAD answers never carry a body.
@Suite(.offThePool) struct ServerAnswerTests {
    /// `/hold` requests are kept unanswered; `/drop` ones dropped; `/events` streams; others get 200.
    final class App: HTTPResponder {
        let held = Mutex<[HTTPResponseWriter]>([])
        let holding = Recorder<String>()
        let notices = Recorder<EventStreamNotice>()
        let streams = Recorder<ServerSentEventStream.SendResult>()
        let requests = Atomic<Int>(0)
        let bigRequests = Atomic<Int>(0)

        func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
            requests.add(1, ordering: .relaxed)
            switch request.path {
            case "/hold":
                held.withLock { $0.append(writer) }
                holding.record(request.method.rawValue)
            case "/drop":
                return
            case "/events":
                let stream = writer.startEventStream(headers: ["X-Stream": "1"]) { [notices] notice in
                    notices.record(notice)
                }
                streams.record(stream.send(ServerSentEvent(data: "first")))
            case "/big":
                bigRequests.add(1, ordering: .relaxed)
                writer.respond(status: 200, body: [UInt8](repeating: 0x62, count: 100_000))
            default:
                writer.respond(status: 200, body: Array("ok".utf8))
            }
        }

        func response(for rejection: HTTPRejection) -> HTTPResponse {
            JSONRefusals().response(for: rejection)
        }
    }

    @Test func timeoutsAndADroppedRequestAreAnsweredByTheResponder() async throws {
        let clock = InjectedClock()
        let app = App()
        try await withHTTPServer(app, clock: clock, configure: { $0.loopCount = 1 }) { _, address in
            let head = try TestClient(address)
            try head.send("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ")
            let body = try TestClient(address)
            try body.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
            let slow = try TestClient(address)
            try slow.send("GET /hold HTTP/1.1\r\nHost: a\r\n\r\n")
            try await app.holding.next("the held request to reach the responder")
            try passBarrier(address)
            // Past the head (10 s), body (30 s) and response (60 s) timeouts at once.
            await clock.advance(by: .seconds(61))
            let headAnswer = try head.readResponse()
            #expect(headAnswer.status == 408)
            #expect(
                headAnswer.text
                    == "{\"error\":{\"code\":\"requestTimeout\","
                    + "\"message\":\"the request head was not complete within 10000 ms\"}}"
            )
            let bodyAnswer = try body.readResponse()
            #expect(bodyAnswer.status == 408)
            #expect(
                bodyAnswer.text
                    == "{\"error\":{\"code\":\"requestTimeout\",\"message\":\"the request body stalled for 30000 ms\"}}"
            )
            let slowAnswer = try slow.readResponse()
            #expect(slowAnswer.status == 503)
            #expect(slowAnswer.header("Connection") == "close")
            #expect(
                slowAnswer.text
                    == "{\"error\":{\"code\":\"responseTimeout\","
                    + "\"message\":\"the server did not answer within 60000 ms\"}}"
            )
            for client in [head, body, slow] { try client.readToEnd() }

            let dropped = try TestClient(address)
            try dropped.send("GET /drop HTTP/1.1\r\nHost: a\r\n\r\n")
            let response = try dropped.readResponse()
            #expect(response.status == 500)
            #expect(response.text.hasPrefix("{\"error\":{\"code\":\"noResponse\""))
        }
    }

    @Test func headOnAnEventStreamGetsItsHeadAndNoEvents() async throws {
        let app = App()
        try await withHTTPServer(app) { _, address in
            let get = try TestClient(address)
            try get.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let getHead = try get.read(until: "\r\n\r\n")
            #expect(try await app.streams.next() == .queued)

            let head = try TestClient(address)
            try head.send("HEAD /events HTTP/1.1\r\nHost: a\r\n\r\n")
            let headHead = try head.read(until: "\r\n\r\n")
            // The producer learns at once that nothing will be sent.
            #expect(try await app.streams.next() == .closed)
            #expect(try await app.notices.next() == .closed(reason: "a HEAD request gets no events"))
            // The head GET gets, bar the date; then the end of the connection, not an event.
            let strip: (String) -> String = {
                $0.split(separator: "\r\n").filter { !$0.hasPrefix("Date:") }.joined(separator: "\r\n")
            }
            #expect(strip(headHead) == strip(getHead))
            #expect(headHead.contains("Content-Type: text/event-stream\r\n"))
            #expect(try head.readToEnd().isEmpty)
        }
    }

    @Test func headAnswersCarryTheLengthAGetWouldAndNoBody() async throws {
        try await withHTTPServer(App()) { _, address in
            let client = try TestClient(address)
            try client.send("HEAD /big HTTP/1.1\r\nHost: a\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try client.read(until: "\r\n\r\n").contains("Content-Length: 100000\r\n"))
            // The next bytes are the next answer: the HEAD answer had no body.
            #expect(try client.readResponse().text == "ok")
        }
    }

    @Test func atTheShutdownDeadlineUnansweredRequestsGet503AndTheServerStops() async throws {
        let clock = InjectedClock()
        let app = App()
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.loopCount = 1
        configuration.shutdownTimeout = .seconds(10)
        let server = HTTPServer(configuration: configuration, responder: app, clock: clock, logger: .disabled)
        let address = try server.start()
        let waiting = try TestClient(address)
        try waiting.send("POST /hold HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}")
        let waitingHead = try TestClient(address)
        try waitingHead.send("HEAD /hold HTTP/1.1\r\nHost: a\r\n\r\n")
        try await app.holding.next("the POST to reach the responder") { $0 == "POST" }
        try await app.holding.next("the HEAD to reach the responder") { $0 == "HEAD" }
        let stream = try TestClient(address)
        try stream.send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try stream.read(until: "data: first\n\n").contains("200 OK"))
        let idle = try TestClient(address)
        #expect(try idle.outcome(of: "/") == .answered(200))

        server.shutdown()
        // Shutdown began: idle connections close and streams end at once; the others wait.
        try idle.readToEnd()
        try stream.readToEnd()
        #expect(try await app.notices.next() == .closed(reason: "server shutting down"))

        await clock.advance(by: .seconds(11))
        let answer = try waiting.readResponse()
        #expect(answer.status == 503)
        #expect(answer.header("Connection") == "close")
        #expect(
            answer.text
                == "{\"error\":{\"code\":\"shuttingDown\","
                + "\"message\":\"the server is shutting down and could not finish this request\"}}"
        )
        try waiting.readToEnd()
        #expect(try waitingHead.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 503 "))
        #expect(try waitingHead.readToEnd().isEmpty, "a HEAD answer has no body")
        // Down at the deadline: the loop has stopped.
        try await stop(server)
        // An answer after the deadline goes nowhere, harmlessly.
        for writer in app.held.withLock({ $0 }) { writer.respond(status: 200) }
    }

    @Test func aClientThatPipelinesAndNeverReadsStopsBeingServedUntilItReads() async throws {
        let app = App()
        try await withHTTPServer(app, configure: { $0.loopCount = 1 }) { _, address in
            let client = try TestClient(address, receiveBuffer: 4096)
            let count = 400
            try client.send(String(repeating: "GET /big HTTP/1.1\r\nHost: a\r\n\r\n", count: count))
            // One loop: once another client's request is answered, the loop has read those 400
            // requests (sent earlier) and done with them what it will.
            #expect(try TestClient(address).outcome(of: "/probe") == .answered(200))
            // 40 MB were asked for; the server answered what fits its high-water mark and the kernel's
            // buffers, then left the rest unread.
            #expect(app.bigRequests.load(ordering: .relaxed) < count / 4)
            for _ in 0..<count {
                #expect(try client.readResponse().body.count == 100_000)
            }
            #expect(app.bigRequests.load(ordering: .relaxed) == count)
        }
    }
}
