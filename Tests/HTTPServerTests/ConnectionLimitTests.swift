import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What one request on a fresh connection came to: an answer, or the connection closed unanswered.
/// A hang fails (the client's read timeout throws).
enum Outcome: Equatable {
    case answered(Int)
    case closedUnanswered
}

extension TestClient {
    /// Sends `GET path` and reads the answer; a reset or close before any answer is `.closedUnanswered`.
    func outcome(of path: String) throws -> Outcome {
        do {
            try send("GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n")
        } catch {
            return .closedUnanswered
        }
        do {
            return .answered(try readResponse().status)
        } catch let failure as TestFailure where failure.description.contains("closed the connection before") {
            return .closedUnanswered
        }
    }
}

/// Renders every refusal as the API's JSON error, to see that refusals go through the responder.
struct JSONRefusals: HTTPResponder {
    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        writer.respond(status: 200, body: Array("ok".utf8))
    }
    func response(for rejection: HTTPRejection) -> HTTPResponse {
        HTTPResponse(
            status: rejection.status, headers: ["Content-Type": "application/json"],
            body: Array("{\"error\":{\"code\":\"\(rejection.kind)\",\"message\":\"\(rejection.message)\"}}".utf8))
    }
}

@Suite(.offThePool) struct ConnectionLimitTests {
    /// Opens connections until one is served again, at most `attempts` times (a closed connection is
    /// released when its loop reads the peer's FIN, an instant after the client closes).
    static func servedAgain(
        _ address: SocketAddress, path: String = "/again", source: String? = nil, attempts: Int = 200
    ) throws -> Bool {
        for _ in 0..<attempts {
            if try TestClient(address, source: source).outcome(of: path) == .answered(200) { return true }
        }
        return false
    }

    @Test func answersConnectionsOverTheTotalLimitWith503AndRecovers() async throws {
        try await withHTTPServer(JSONRefusals(), configure: { $0.maxConnections = 3 }) { _, address in
            var held: [TestClient] = []
            for index in 0..<3 {
                let client = try TestClient(address)
                #expect(try client.outcome(of: "/held/\(index)") == .answered(200))
                held.append(client)
            }
            let over = try TestClient(address)
            // The refusal comes without a request: read it as the first thing on the connection.
            let refusal = try over.readResponse()
            #expect(refusal.status == 503)
            #expect(refusal.header("Connection") == "close")
            #expect(refusal.text.hasPrefix("{\"error\":{\"code\":\"tooManyConnections\""))
            try over.readToEnd()
            // The held connections are still served.
            #expect(try held[0].outcome(of: "/still") == .answered(200))

            held.removeFirst()
            #expect(try Self.servedAgain(address), "a connection closed, but new ones are still refused")
        }
    }

    @Test func limitsConnectionsPerClientAddress() async throws {
        try await withHTTPServer(
            echoResponder,
            configure: { configuration in
                configuration.maxConnectionsPerAddress = 2
                configuration.connectionLimitExemptions = []
            }
        ) { _, address in
            let first = try TestClient(address, source: "127.0.0.2")
            let second = try TestClient(address, source: "127.0.0.2")
            #expect(try first.outcome(of: "/1") == .answered(200))
            #expect(try second.outcome(of: "/2") == .answered(200))
            #expect(try TestClient(address, source: "127.0.0.2").outcome(of: "/3") == .answered(503))
            // Another address has its own count.
            let other = try TestClient(address, source: "127.0.0.3")
            #expect(try other.outcome(of: "/other") == .answered(200))
            #expect(try first.outcome(of: "/1-again") == .answered(200))

            _ = consume first
            #expect(
                try Self.servedAgain(address, source: "127.0.0.2"),
                "a connection from 127.0.0.2 closed, but new ones are still refused")
            _ = second
        }
    }

    @Test func exemptAddressesAreNotLimitedPerAddress() async throws {
        try await withHTTPServer(
            echoResponder,
            configure: { configuration in
                configuration.maxConnectionsPerAddress = 1
                configuration.connectionLimitExemptions = [IPAddressRange("127.0.0.4/31")!]
            }
        ) { _, address in
            // 127.0.0.4/31 holds .4 and .5; .6 is outside it.
            let clients = try (0..<4).map { _ in try TestClient(address, source: "127.0.0.5") }
            for (index, client) in clients.enumerated() {
                #expect(try client.outcome(of: "/\(index)") == .answered(200))
            }
            let outside = try TestClient(address, source: "127.0.0.6")
            #expect(try outside.outcome(of: "/a") == .answered(200))
            #expect(try TestClient(address, source: "127.0.0.6").outcome(of: "/b") == .answered(503))
        }
    }

    @Test func loopbackIsExemptByDefault() async throws {
        try await withHTTPServer(echoResponder, configure: { $0.maxConnectionsPerAddress = 1 }) { _, address in
            let clients = try (0..<5).map { _ in try TestClient(address) }
            for (index, client) in clients.enumerated() {
                #expect(try client.outcome(of: "/\(index)") == .answered(200))
            }
        }
    }

    @Test(arguments: [
        ("127.0.0.0/8", "127.255.0.1", true), ("127.0.0.0/8", "128.0.0.1", false), ("10.1.2.3", "10.1.2.3", true),
        ("10.1.2.3", "10.1.2.4", false), ("::1", "::1", true), ("::1", "127.0.0.1", false),
        ("fd00::/8", "fdab::1", true),
        ("fd00::/8", "fe80::1", false), ("0.0.0.0/0", "192.168.1.1", true), ("0.0.0.0/0", "::2", false),
        ("::/0", "::2", true),
    ])
    func addressRangesContainTheirAddresses(_ range: String, _ address: String, _ contained: Bool) throws {
        let block = try #require(IPAddressRange(range))
        #expect(block.contains(try #require(IPAddress(address))) == contained)
    }

    @Test func refusesMalformedRanges() {
        for text in ["", "10.0.0.0/33", "::/129", "10.0.0/8", "host", "10.0.0.1/-1", "10.0.0.1/x"] {
            #expect(IPAddressRange(text) == nil, "\(text) should not parse")
        }
        #expect(IPAddressRange("10.1.2.3/8")?.description == "10.0.0.0/8")
    }
}
