import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// RFC 9110/9112 exactness through the whole service: methods, Host, HEAD, and the answers the HTTP
/// server gives by itself (timeouts, shutdown), all in the API's error shape.
@Suite(.offThePool) struct HTTPConformanceTests {
    @Test func anyMethodOnAnExistingPathIs405WithAllow() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        for method in ["QUERY", "PATCH", "BREW", "get"] {
            let response = try server.request(method, "/sessions/\(id)")
            #expect(response.status == 405, "\(method)")
            #expect(response.errorCode == "method_not_allowed")
            #expect(response.header("Allow") == "GET, DELETE, HEAD, OPTIONS")
        }
        let create = try server.request("PATCH", "/sessions")
        #expect(create.status == 405)
        #expect(create.header("Allow") == "POST, OPTIONS")
    }

    @Test func aMethodNoRouteServesOnAnUnknownPathIs501() throws {
        let server = try TestServer()
        let unknown = try server.request("BREW", "/nowhere")
        #expect(unknown.status == 501)
        #expect(unknown.errorCode == "not_implemented")
        #expect(try server.request("PATCH", "/nowhere").status == 501)
        // A method some route serves, on an unknown path: the path is what is wrong.
        #expect(try server.request("GET", "/nowhere").errorCode == "not_found")
        #expect(try server.request("DELETE", "/nowhere").errorCode == "not_found")
        // No tunnels: CONNECT is refused before routing.
        let connection = try server.connect()
        try connection.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        let connect = try connection.readResponse()
        #expect(connect.status == 501)
        #expect(connect.errorCode == "not_implemented")
    }

    @Test(arguments: [
        "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET /healthz HTTP/1.1\r\n\r\n",
        "GET http://a/healthz HTTP/1.1\r\nHost: b\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: a:99999\r\n\r\n",
    ])
    func aBadHostIs400InTheErrorShape(_ request: String) throws {
        let server = try TestServer()
        let connection = try server.connect()
        try connection.send(request)
        let response = try connection.readResponse()
        #expect(response.status == 400)
        #expect(response.errorCode == "bad_request")
        #expect(response.header("Connection") == "close")
        #expect(try connection.readToEnd().isEmpty)
    }

    @Test func headOnAnEventStreamNeitherStreamsNorSubscribes() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let connection = try server.connect()
        let head = try connection.request("HEAD", "/sessions/\(id)/events")
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "text/event-stream")
        #expect(head.header("Cache-Control") == "no-cache")
        #expect(head.header("Connection") == "close")
        #expect(try connection.readToEnd().isEmpty)
        let sessions =
            try server.request("GET", "/admin/sessions", headers: server.admin).json()["sessions"] as? [[String: Any]]
        #expect(sessions?.first?["subscribers"] as? Int == 0)
        // An unknown session is a 404 for HEAD as for GET.
        #expect(try server.request("HEAD", "/sessions/nope/events").status == 404)
    }

    @Test func headOfASessionHasGETsHeadersAndNoBody() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let connection = try server.connect()
        let get = try connection.request("GET", "/sessions/\(id)")
        let head = try connection.request("HEAD", "/sessions/\(id)")
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(get.body.count))
        #expect(head.header("Content-Type") == get.header("Content-Type"))
        // The HEAD answer had no body: the next answer on the connection starts right after it.
        #expect(try connection.request("GET", "/healthz").json()["status"] as? String == "ok")
    }

    @Test func aSlowRequestHeadIs408InTheErrorShape() async throws {
        // One loop: once another request is answered, the loop has seen the slow head's bytes.
        let server = try TestServer(configure: { $0.http.loops = 1 })
        let connection = try server.connect()
        try connection.send("GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ")
        #expect(try server.request("GET", "/healthz").status == 200)
        await server.clock.advance(by: .seconds(11))
        let response = try connection.readResponse()
        #expect(response.status == 408)
        #expect(response.errorCode == "request_timeout")
        #expect(response.header("Connection") == "close")
    }

    @Test func shutdownAnswersAnActionStillWaitingWith503() async throws {
        // An upstream that never answers: the action's effect runs past any deadline.
        let server = try TestServer(
            configure: { configuration in
                configuration.http.loops = 1
                configuration.http.shutdownDeadlineSeconds = 10
                configuration.sessions.waitTimeoutSeconds = 600
            },
            search: { _, _ in
                try await Task.sleep(for: .seconds(3600))
                return ([], nil)
            })
        let id = try server.createSession("search")
        let waiting = try server.connect()
        try waiting.send(
            "POST /sessions/\(id)/actions?wait=true HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
                + "Content-Length: 38\r\n\r\n{\"type\":\"updateQuery\",\"query\":\"swift\"}"
        )
        try await eventually("the action to start loading") {
            (try server.request("GET", "/sessions/\(id)").json()["state"] as? [String: Any])?["isLoading"] as? Bool
                == true
        }
        let idle = try server.connect()
        #expect(try idle.request("GET", "/healthz").status == 200)
        server.server.shutdown()
        // Shutdown began (the idle connection closed); the action still waits.
        try idle.readToEnd()
        await server.clock.advance(by: .seconds(11))
        let response = try waiting.readResponse()
        #expect(response.status == 503)
        #expect(response.errorCode == "shutting_down")
        #expect(response.header("Connection") == "close")
        #expect(try waiting.readToEnd().isEmpty)
    }
}
