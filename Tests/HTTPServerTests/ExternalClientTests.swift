import Foundation
import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Answers JSON POSTs with what it received, and streams three events on `/events`.
struct CurlApp: HTTPResponder {
    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        if request.path == "/events" {
            let stream = writer.startEventStream { _ in }
            for index in 1...3 {
                _ = stream.send(ServerSentEvent(event: "state", id: "\(index)", data: "{\"n\":\(index)}"))
            }
            stream.close(with: ServerSentEvent(event: "end", data: "bye"))
            return
        }
        let type = request.headers["content-type"] ?? "-"
        let body =
            "{\"method\":\"\(request.method.rawValue)\",\"type\":\"\(type)\",\"bytes\":\(request.body.count),"
            + "\"chunked\":\(request.headers["transfer-encoding"] != nil)}"
        writer.respond(status: 201, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }
}

@Suite(.offThePool, .serialized) struct ExternalClientTests {
    @Test func curlPostsJSONUploadsChunkedAndFollowsAnEventStream() async throws {
        let curl = try TestProcess.tool("curl")
        try await withHTTPServer(CurlApp()) { _, address in
            let base = "http://127.0.0.1:\(address.port)"
            let post = try await TestProcess.run(
                curl,
                [
                    "-sS", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{\"type\":\"increase\"}",
                    base + "/sessions/a/actions",
                ])
            #expect(post.termination == .exited(0))
            #expect(post.output == "{\"method\":\"POST\",\"type\":\"application/json\",\"bytes\":19,\"chunked\":false}")

            let upload = [UInt8](repeating: 0x7A, count: 200_000)
            let chunked = try await TestProcess.run(
                curl,
                [
                    "-sS", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: application/octet-stream",
                    "--data-binary", "@-", base + "/upload",
                ], input: upload)
            #expect(chunked.termination == .exited(0))
            #expect(
                chunked.output
                    == "{\"method\":\"POST\",\"type\":\"application/octet-stream\",\"bytes\":200000,\"chunked\":true}")

            let events = try await TestProcess.run(curl, ["-sS", "-N", base + "/events"])
            #expect(events.termination == .exited(0))
            #expect(
                events.output
                    == "event: state\nid: 1\ndata: {\"n\":1}\n\nevent: state\nid: 2\ndata: {\"n\":2}\n\n"
                    + "event: state\nid: 3\ndata: {\"n\":3}\n\nevent: end\ndata: bye\n\n"
            )
        }
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func shutsDownGracefullyOnASignal(_ signal: Int32) async throws {
        let server = try await ServerProcess.start("http-bench-server", arguments: ["--loops", "1"])
        let stream = try server.client()
        try stream.send(
            "POST /sessions HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\n\r\n{\"reactor\":\"counter\",\"id\":\"s\"}")
        #expect(try stream.readResponse().status == 201)
        try stream.send("GET /sessions/s/events HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try stream.read(until: "\n\n").contains("data: {\"value\":0}"))
        #expect(try await server.stop(signal: signal) == .exited(0))
        try stream.readToEnd()
    }
}
