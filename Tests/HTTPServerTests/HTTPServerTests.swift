import HTTPServer
import Testing

@Suite struct HTTPServerTests {
    @Test func answersAGetOverARealSocket() async throws {
        try await withServer { _, address in
            let client = try TestClient(address)
            try client.send("GET /hello/w%20rld?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "GET /hello/w%20rld 0")
            #expect(response.header("Date") != nil)
        }
    }
}
