import Dispatch
import Foundation
import HTTPServer
import Logs
import Posix
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Echoes method, path and body length; the default app of these tests.
let echoResponder = ClosureResponder { request, writer in
    let text = "\(request.method.rawValue) \(request.path) \(request.body.count)"
    writer.respond(status: 200, headers: ["Content-Type": "text/plain"], body: Array(text.utf8))
}

@Suite(.offThePool) struct HTTPServerTests {
    @Test func answersAGetOverARealSocket() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send("GET /hello/w%20rld?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "GET /hello/w%20rld 0")
            #expect(response.header("Date")?.hasSuffix(" GMT") == true)
        }
    }

    @Test func servesManyShortConnectionsReusingSlots() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            for index in 0..<500 {
                let client = try TestClient(address)
                try client.send("GET /c/\(index) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                #expect(try client.readResponse().text == "GET /c/\(index) 0")
                if index % 2 == 0 { client.reset() }
            }
        }
    }

    @Test func refusesAPortSomeoneElseListensOn() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            var configuration = HTTPServer.Configuration()
            configuration.port = address.port
            configuration.loopCount = 2
            let second = HTTPServer(configuration: configuration, responder: echoResponder, logger: .disabled)
            #expect(throws: IOError(call: "bind", errno: EADDRINUSE)) { _ = try second.start() }
        }
    }

    @Test func decodesPathSegmentsAndQuery() async throws {
        let seen = Mutex<[String]>([])
        let responder = ClosureResponder { request, writer in
            seen.withLock {
                $0 =
                    request.pathSegments + ["|"] + request.query.map { "\($0.0)=\($0.1)" } + [
                        request.queryValue("b") ?? "-"
                    ]
            }
            writer.respond(status: 204)
        }
        try await withHTTPServer(responder) { _, address in
            let client = try TestClient(address)
            try client.send("GET /a%2Fb/c%20d//e?x=1&b=two+words&b=3&e=%C3%A9 HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try client.readResponse().status == 204)
        }
        #expect(seen.withLock { $0 } == ["a/b", "c d", "e", "|", "x=1", "b=two words", "b=3", "e=é", "two words"])
    }

    @Test func keepsOneConnectionAliveForAThousandRequests() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            for index in 0..<1000 {
                try client.send("GET /n/\(index) HTTP/1.1\r\nHost: a\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.text == "GET /n/\(index) 0")
                #expect(response.header("Connection") == nil)
            }
        }
    }

    @Test func handsPipelinedRequestsToTheResponderOneAtATimeAndAnswersInOrder() async throws {
        // Ten requests arrive in one read; each reaches the responder only once the one before it is
        // answered (from another thread here), so answers leave in request order.
        let responder = HoldingResponder()
        let held = responder.requests
        try await withHTTPServer(responder) { _, address in
            let client = try TestClient(address)
            try client.send((0..<10).map { "GET /p/\($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined())
            for index in 0..<10 {
                let request = try await held.next("request \(index) to reach the responder")
                #expect(request.pathSegments.last == String(index))
                #expect(held.count == index + 1, "a request reached the responder before request \(index) was answered")
                // A thread of its own: GCD's global threads can all be blocked by other tests of the run.
                Thread.detachNewThread { request.writer.respond(status: 200, body: Array("r\(index)".utf8)) }
            }
            for index in 0..<10 {
                #expect(try client.readResponse().text == "r\(index)")
            }
        }
    }

    @Test func answersAThousandPipelinedRequestsAllAnsweredFromAnotherThread() async throws {
        let responder = ClosureResponder { request, writer in
            DispatchQueue.global().async { writer.respond(status: 200, body: Array(request.path.utf8)) }
        }
        try await withHTTPServer(responder) { _, address in
            let client = try TestClient(address)
            try client.send((0..<1000).map { "GET /\($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined())
            for index in 0..<1000 {
                #expect(try client.readResponse().text == "/\(index)")
            }
        }
    }

    @Test func sendsContinueBeforeReadingAHeldBackBody() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send("POST /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("hello")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "POST /upload 5")
        }
    }

    @Test func readsAChunkedUpload() async throws {
        let bodies = Mutex<[UInt8]>([])
        let responder = ClosureResponder { request, writer in
            bodies.withLock { $0 = request.body }
            writer.respond(status: 200)
        }
        try await withHTTPServer(responder) { _, address in
            let client = try TestClient(address)
            try client.send("POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nWiki\r\n")
            try client.send("5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: ignored\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        #expect(String(decoding: bodies.withLock { $0 }, as: UTF8.self) == "Wikipedia in\r\n\r\nchunks.")
    }

    @Test func answersHeadWithoutABody() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send("HEAD /h HTTP/1.1\r\nHost: a\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\n\r\n")
            let head = try client.read(until: "\r\n\r\n")
            #expect(head.contains("Content-Length: 9\r\n"))
            #expect(try client.readResponse().text == "GET /after 0")
        }
    }

    @Test func framesResponsesItselfWhateverTheApplicationSays() async throws {
        let big = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0) }
        let responder = ClosureResponder { request, writer in
            switch request.path {
            case "/big": writer.respond(status: 200, body: big)
            case "/lying":
                writer.respond(
                    status: 200, headers: ["Content-Length": "99", "Transfer-Encoding": "chunked"],
                    body: Array("four".utf8))
            default: writer.respond(status: 200, headers: ["Content-Length": "1234"])
            }
        }
        try await withHTTPServer(responder) { _, address in
            let client = try TestClient(address)
            try client.send(
                "GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /lying HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "HEAD /head HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            #expect(try client.readResponse().body == big)
            let lying = try client.readResponse()
            #expect(lying.text == "four")
            #expect(lying.header("Transfer-Encoding") == nil)
            // HEAD announces the length a GET would have; no body follows.
            #expect(try client.read(until: "\r\n\r\n").contains("Content-Length: 1234\r\n"))
            try client.send("GET /after HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try client.readResponse().header("Content-Length") == "0")
        }
    }

    @Test func closesHTTP10ByDefaultAndKeepsItAliveOnRequest() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send("GET /old HTTP/1.0\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Connection") == "close")
            try client.readToEnd()

            let keep = try TestClient(address)
            try keep.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try keep.readResponse().text == "GET /a 0")
            try keep.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try keep.readResponse().text == "GET /b 0")
        }
    }

    @Test func honoursConnectionClose() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send("GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Connection") == "close")
            try client.readToEnd()
        }
    }

    static let rejections: [(String, Int)] = [
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999999999999999\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n", 400),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\u{0}\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\u{1b}\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 501),
        ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
        ("GET http://a/x HTTP/1.1\r\nHost: b\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 33000) + "\r\n\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X: 1\r\n", count: 101) + "\r\n", 431),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", 413),
    ]

    @Test(arguments: rejections)
    func rejectsAndClosesThenStillServesNewConnections(_ request: String, _ status: Int) async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status)
            #expect(response.header("Connection") == "close")
            try client.readToEnd()

            let fresh = try TestClient(address)
            try fresh.send("GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try fresh.readResponse().text == "GET /ok 0")
        }
    }

    @Test func rendersRejectionsThroughTheResponder() async throws {
        struct JSONRejections: HTTPResponder {
            func respond(to request: HTTPRequest, writer: HTTPResponseWriter) { writer.respond(status: 200) }
            func response(for rejection: HTTPRejection) -> HTTPResponse {
                HTTPResponse(
                    status: rejection.status, headers: ["Content-Type": "application/json"],
                    body: Array("{\"error\":\"\(rejection.kind)\"}".utf8))
            }
        }
        try await withHTTPServer(JSONRejections()) { _, address in
            let client = try TestClient(address)
            try client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.text == "{\"error\":\"bodyTooLarge\"}")
        }
    }

    @Test func refusesAnOversizedBodyWithoutReadingIt() async throws {
        try await withHTTPServer(echoResponder, configure: { $0.limits.maxBodyBytes = 1000 }) { _, address in
            let client = try TestClient(address)
            // Head only: the 413 must come before any of the body is sent.
            try client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n")
            #expect(try client.readResponse().status == 413)
            let chunked = try TestClient(address)
            try chunked.send("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n")
            #expect(try chunked.readResponse().status == 413)
        }
    }

    // Each timeout test puts one connection just short of its timeout (it is still served) and another
    // just past it (it is cut): a timeout much longer or shorter than configured fails. They run one
    // loop and pass a barrier before moving the clock (so the server has seen every byte sent before at
    // the time the test means) and after (so it has run the timers due then before the next step).

    @Test func cutsOffASlowlorisHeadAtTheHeadTimeout() async throws {
        let clock = InjectedClock()
        try await withHTTPServer(echoResponder, clock: clock, configure: { $0.loopCount = 1 }) { _, address in
            let finishing = try TestClient(address)
            let slow = try TestClient(address)
            try finishing.send("GET /finishing HTTP/1.1\r\nHost: a\r\nX-Slow: ")
            try slow.send("GET /slow HTTP/1.1\r\nHost: a\r\nX-Slow: ")
            try passBarrier(address)
            await clock.advance(by: .milliseconds(9_900))
            try passBarrier(address)
            try finishing.send("1\r\n\r\n")
            #expect(try finishing.readResponse().text == "GET /finishing 0", "a head completed within 10 s is served")
            await clock.advance(by: .milliseconds(200))
            #expect(try slow.readResponse().status == 408)
            try slow.readToEnd()
        }
    }

    @Test func closesIdleKeepAliveConnectionsAtTheIdleTimeout() async throws {
        let clock = InjectedClock()
        try await withHTTPServer(echoResponder, clock: clock, configure: { $0.loopCount = 1 }) { _, address in
            let busy = try TestClient(address)
            let idle = try TestClient(address)
            for client in [busy, idle] {
                try client.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                #expect(try client.readResponse().status == 200)
            }
            // Long past the head timeout but short of the 60 s idle timeout, the connection still serves.
            await clock.advance(by: .milliseconds(59_900))
            try passBarrier(address)
            try busy.send("GET /again HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try busy.readResponse().status == 200)
            await clock.advance(by: .milliseconds(200))
            #expect(try idle.readToEnd().isEmpty, "an idle connection closes without a response")
        }
    }

    @Test func closesABodyThatStopsArrivingAtTheBodyTimeout() async throws {
        let clock = InjectedClock()
        try await withHTTPServer(echoResponder, clock: clock, configure: { $0.loopCount = 1 }) { _, address in
            let steady = try TestClient(address)
            let stalled = try TestClient(address)
            for client in [steady, stalled] {
                try client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
            }
            try passBarrier(address)
            await clock.advance(by: .milliseconds(29_900))
            try passBarrier(address)
            try steady.send("defghij")
            #expect(try steady.readResponse().text == "POST / 10", "a body that keeps arriving within 30 s is read")
            await clock.advance(by: .milliseconds(200))
            #expect(try stalled.readResponse().status == 408)
        }
    }

    @Test func cutsOffAPeerThatStopsReadingAtTheWriteTimeout() async throws {
        let clock = InjectedClock()
        let logs = Recorder<LogRecord>()
        let answered = Recorder<Int>()
        let big = [UInt8](repeating: 0x61, count: 32 * 1024 * 1024)
        let responder = ClosureResponder { request, writer in
            guard request.path == "/big" else { return writer.respond(status: 204) }
            writer.respond(status: 200, body: big)
            answered.record(1)
        }
        // One loop: a request on another connection is a barrier (once it is answered, the loop has
        // seen the clock's new time and run the timers due then).
        try await withHTTPServer(
            responder, clock: clock, logger: Logger(label: "test", level: .trace, handler: logs),
            configure: { $0.loopCount = 1 }
        ) { _, address in
            let client = try TestClient(address)
            try client.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
            try await answered.next("the 32 MiB response to be handed to the server")
            let cutOff = { @Sendable (record: LogRecord) in
                record.message == "connection closed"
                    && record["reason"]?.description.hasPrefix("peer did not read for") == true
            }
            // 32 MiB cannot fit in the socket buffers and the client never reads.
            await clock.advance(by: .milliseconds(29_900))
            try passBarrier(address)
            #expect(!logs.values.contains(where: cutOff), "cut off before the 30 s write timeout")
            await clock.advance(by: .milliseconds(200))
            try await logs.next("the server to give up on the peer that stopped reading", where: cutOff)
            withExtendedLifetime(client) {}
        }
    }

    @Test func survivesAClientResetMidRequest() async throws {
        try await withHTTPServer(echoResponder) { _, address in
            let client = try TestClient(address)
            try client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\npartial")
            client.reset()
            let fresh = try TestClient(address)
            try fresh.send("GET /ok HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try fresh.readResponse().text == "GET /ok 0")
        }
    }

    @Test func ignoresASecondAnswerAndAnswersADroppedWriterWith500() async throws {
        let responder = ClosureResponder { request, writer in
            if request.path == "/drop" { return }
            writer.respond(status: 201)
            writer.respond(status: 202)
        }
        try await withHTTPServer(responder) { _, address in
            let client = try TestClient(address)
            try client.send(
                "GET /twice HTTP/1.1\r\nHost: a\r\n\r\nGET /drop HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "GET /twice HTTP/1.1\r\nHost: a\r\n\r\n"
            )
            #expect(try client.readResponse().status == 201)
            #expect(try client.readResponse().status == 500)
            #expect(try client.readResponse().status == 201)
        }
    }

    @Test func answersWith503AtTheResponseTimeout() async throws {
        let clock = InjectedClock()
        let responder = HoldingResponder { $0 == "/barrier" }
        let held = responder.requests
        try await withHTTPServer(responder, clock: clock, configure: { $0.loopCount = 1 }) { _, address in
            let answered = try TestClient(address)
            let forgotten = try TestClient(address)
            try answered.send("GET /answered HTTP/1.1\r\nHost: a\r\n\r\n")
            try forgotten.send("GET /forgotten HTTP/1.1\r\nHost: a\r\n\r\n")
            try await held.waitForCount(2, "both requests to reach the responder")
            await clock.advance(by: .milliseconds(59_900))
            try passBarrier(address)
            held.values.first { $0.target == "/answered" }?.writer.respond(status: 200, body: Array("late".utf8))
            #expect(try answered.readResponse().text == "late", "an answer within 60 s goes out")
            await clock.advance(by: .milliseconds(200))
            #expect(try forgotten.readResponse().status == 503)
        }
    }
}

/// Returns once the server's loop has handled everything sent to it before (with one loop): a
/// request on a fresh connection is answered only after the loop got to what was already waiting.
func passBarrier(_ address: SocketAddress) throws {
    let client = try TestClient(address)
    try client.send("GET /barrier HTTP/1.1\r\nHost: a\r\n\r\n")
    _ = try client.readResponse()
}
