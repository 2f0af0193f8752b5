import Dispatch
import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

/// A parsed request keeps its target, headers and body in storage of its own (the target shares the headers'
/// array), never in the loop's read buffer: a responder may keep a request long after the buffer was reused
/// for other reads. And an answer given as borrowed bytes (`respond(status:headers:bodyBytes:)`) is the same
/// answer on the loop (encoded in place) and off it (copied first).
@Suite(.offThePool) struct RequestLifetimeTests {
    /// Keeps every request it is given, answers each at once with its own target and body.
    final class Keeper: HTTPResponder {
        let kept = Mutex<[HTTPRequest]>([])
        let count = Recorder<Int>()

        func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) {
            let request = copy request
            let n = kept.withLock {
                $0.append(request)
                return $0.count
            }
            writer.respond(status: 200, body: Array(request.target.utf8) + [UInt8(ascii: " ")] + request.body)
            count.record(n)
        }
    }

    @Test func aKeptRequestOutlivesTheReadBufferItWasParsedFrom() async throws {
        let app = Keeper()
        // One loop: every connection's reads go through the same read buffer.
        try await withHTTPServer(app, configure: { $0.loopCount = 1 }) { _, address in
            let first = try TestClient(address)
            let second = try TestClient(address)
            var expected: [(target: String, body: String, tag: String)] = []
            for round in 0..<20 {
                // Targets of different lengths (past the 15 bytes a String keeps inline), each client in turn,
                // the second pipelining two requests in one write; every read overwrites the buffer.
                let long = "/sessions/" + String(repeating: "x", count: round * 7) + "/actions?wait=\(round)"
                let short = "/s\(round)"
                let content = "body\(round % 10)\(round % 10)"
                try first.send(
                    "POST \(long) HTTP/1.1\r\nHost: a\r\nX-Tag: first-\(round)\r\nContent-Length: 6\r\n\r\n\(content)")
                expected.append((long, content, "first-\(round)"))
                #expect(try first.readResponse().text == "\(long) \(content)")
                try second.send(
                    "GET \(short) HTTP/1.1\r\nHost: b\r\nX-Tag: second-\(round)\r\n\r\n"
                        + "GET \(short)?again HTTP/1.1\r\nHost: b\r\nX-Tag: third-\(round)\r\n\r\n")
                expected.append((short, "", "second-\(round)"))
                expected.append((short + "?again", "", "third-\(round)"))
                #expect(try second.readResponse().text == "\(short) ")
                #expect(try second.readResponse().text == "\(short)?again ")
            }
            // A request of the HTTP/1.0 kind with no field lines keeps its target as text.
            let bare = try TestClient(address)
            try bare.send("GET /bare/target/of/some/length HTTP/1.0\r\n\r\n")
            expected.append(("/bare/target/of/some/length", "", ""))
            #expect(try bare.readResponse().text == "/bare/target/of/some/length ")
            let total = expected.count
            try await app.count.next("every request to be kept") { $0 == total }
            let kept = app.kept.withLock { $0 }
            #expect(kept.count == expected.count)
            for (request, want) in zip(kept, expected) {
                #expect(request.target == want.target)
                #expect(request.withTargetBytes { String(decoding: $0, as: UTF8.self) } == want.target)
                #expect(String(decoding: request.body, as: UTF8.self) == want.body)
                #expect(request.headers["X-Tag"] == (want.tag.isEmpty ? nil : want.tag))
            }
            // A target set by hand replaces the parsed one, bytes included; the headers keep theirs.
            var changed = kept[0]
            changed.target = "/changed?x=1"
            #expect(changed.withTargetBytes { String(decoding: $0, as: UTF8.self) } == "/changed?x=1")
            #expect(changed.queryValue("x") == "1")
            #expect(changed.headers["X-Tag"] == "first-0")
            #expect(kept[0].target == expected[0].target)
        }
    }

    @Test func anAnswerFromBorrowedBytesIsTheSameOnAndOffTheLoop() async throws {
        let body: [UInt8] = Array("{\"seq\":42}\n".utf8)
        let app = ClosureResponder { request, writer in
            let headers = HTTPHeaders(constant: [("Content-Type", "application/json; charset=utf-8")])
            if request.path == "/off" {
                DispatchQueue.global().async {
                    body.withUnsafeBytes { writer.respond(status: 202, headers: headers, bodyBytes: $0) }
                }
            } else {
                body.withUnsafeBytes { writer.respond(status: 202, headers: headers, bodyBytes: $0) }
            }
        }
        try await withHTTPServer(app) { _, address in
            let client = try TestClient(address)
            for path in ["/on", "/off", "/on"] {
                try client.send("POST \(path) HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
                let answer = try client.readResponse()
                #expect(answer.status == 202)
                #expect(answer.text == "{\"seq\":42}\n")
                #expect(answer.header("Content-Length") == "\(body.count)")
                #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            }
            for path in ["/on", "/off"] {
                try client.send("HEAD \(path) HTTP/1.1\r\nHost: a\r\n\r\n")
                let answer = try client.readResponse(method: "HEAD")
                #expect(answer.status == 202)
                #expect(answer.body.isEmpty)
                #expect(answer.header("Content-Length") == "\(body.count)")
            }
            // Still in step: one more answer on the same connection.
            try client.send("POST /on HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            #expect(try client.readResponse().text == "{\"seq\":42}\n")
            _ = try client.readToEnd()
        }
    }
}
