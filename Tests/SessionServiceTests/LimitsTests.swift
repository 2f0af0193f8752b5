import Foundation
import HTTPServer
import ReactorServerTesting
import Testing

@testable import SessionService

/// Per-client limits: addresses and networks, who the client is behind a proxy, token buckets on the
/// injected clock, and the 429 / 503 answers of a live server.
@Suite(.offThePool) struct LimitsTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.200.3.4", true),
        ("10.0.0.0/8", "11.0.0.1", false),
        ("203.0.113.7", "203.0.113.7", true),
        ("203.0.113.7", "203.0.113.8", false),
        ("0.0.0.0/0", "198.51.100.1", true),
        ("0.0.0.0/0", "2001:db8::1", false),
        ("2001:db8::/32", "2001:db8:ffff::1", true),
        ("2001:db8::/32", "2001:db9::1", false),
        ("::1", "::1", true),
        ("::/0", "127.0.0.1", true),
    ])
    func networksContainTheirAddresses(network: String, address: String, expected: Bool) throws {
        let block = try #require(IPNetwork(network))
        #expect(block.contains(try #require(IPAddress(address))) == expected)
    }

    @Test(arguments: ["", "10.0.0.0/33", "::/129", "10.0.0/8", "host.example", "10.0.0.1/", "1.2.3.4/-1"])
    func malformedNetworksAreRefused(text: String) {
        #expect(IPNetwork(text) == nil)
        #expect(ConfigurationSchema.checkNetwork(text) != nil)
    }

    static func request(peer: String, forwardedFor: [String]) -> HTTPRequest {
        HTTPRequest(
            method: .GET, target: "/healthz",
            headers: HTTPHeaders(forwardedFor.map { (name: "X-Forwarded-For", value: $0) }),
            peer: SocketAddress(host: peer, port: 40000))
    }

    @Test(arguments: [
        // An untrusted peer's header is ignored: anyone can write it.
        ("198.51.100.9", ["203.0.113.7"], "198.51.100.9"),
        // A trusted proxy: the nearest untrusted hop, read from the right.
        ("10.0.0.2", ["203.0.113.7"], "203.0.113.7"),
        ("10.0.0.2", ["6.6.6.6, 203.0.113.7, 10.0.0.3"], "203.0.113.7"),
        ("10.0.0.2", ["6.6.6.6", "203.0.113.7:5123"], "203.0.113.7"),
        ("10.0.0.2", ["[2001:db8::7]:443"], "2001:db8::7"),
        // Every hop trusted: the farthest one.
        ("10.0.0.2", ["10.0.0.4, 10.0.0.3"], "10.0.0.4"),
        // No header: the proxy itself.
        ("10.0.0.2", [], "10.0.0.2"),
        // Garbage stops the walk at the last address that could be read.
        ("10.0.0.2", ["203.0.113.7, nonsense, 10.0.0.3"], "10.0.0.3"),
    ])
    func theClientIsTheNearestUntrustedHop(peer: String, forwardedFor: [String], expected: String) throws {
        let resolver = ClientAddressResolver(trustedProxies: [try #require(IPNetwork("10.0.0.0/8"))])
        #expect(resolver.client(of: Self.request(peer: peer, forwardedFor: forwardedFor))?.description == expected)
    }

    @Test func bucketsRefillOnTheInjectedClock() async throws {
        let clock = InjectedClock()
        let buckets = TokenBuckets(rate: 2, burst: 3, clock: clock)
        let client = try #require(IPAddress("203.0.113.7"))
        let other = try #require(IPAddress("203.0.113.8"))
        for _ in 0..<3 { #expect(buckets.take(client) == nil) }
        let wait = try #require(buckets.take(client))
        #expect(abs(wait - 0.5) < 1e-9, "one token comes back in 1/rate seconds, got \(wait)")
        #expect(buckets.take(other) == nil, "another address has its own bucket")
        await clock.advance(by: .milliseconds(499))
        #expect(buckets.take(client) != nil, "not refilled before its time")
        await clock.advance(by: .milliseconds(1))
        #expect(buckets.take(client) == nil)
    }

    @Test func bucketsStayWithinTheirCapacity() async throws {
        let clock = InjectedClock()
        let buckets = TokenBuckets(rate: 1, burst: 1, capacity: 64, clock: clock)
        for index in 0..<10_000 {
            _ = buckets.take(IPAddress(high: 0, low: 0xFFFF_0000_0000 | UInt64(index)))
            if index % 100 == 0 { await clock.advance(by: .milliseconds(1)) }
        }
        #expect(buckets.count <= 64, "tracked \(buckets.count) addresses")
    }

    @Test func requestsOverTheRateGet429WithRetryAfterAndRecover() async throws {
        let server = try TestServer {
            $0.limits.requestsPerSecond = 1
            $0.limits.requestBurst = 3
            $0.limits.exemptAddresses = []
        }
        for _ in 0..<3 { #expect(try server.request("GET", "/healthz").status == 200) }
        let limited = try server.request("GET", "/reactors")
        #expect(limited.status == 429)
        #expect(limited.header("Retry-After") == "1")
        #expect(try limited.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "rate_limited")
        await server.clock.advance(by: .seconds(1))
        #expect(try server.request("GET", "/healthz").status == 200)
        #expect(try server.request("GET", "/healthz").status == 429)
    }

    @Test func loopbackIsExemptByDefault() throws {
        let server = try TestServer {
            $0.limits.requestsPerSecond = 1
            $0.limits.requestBurst = 1
        }
        for _ in 0..<20 { #expect(try server.request("GET", "/healthz").status == 200) }
    }

    /// The statuses of one request per forwarded-for address, on a server allowing one request per
    /// client that trusts `proxies`.
    static func statuses(trusting proxies: [String], forwardedFor clients: [String]) throws -> [Int] {
        let server = try TestServer {
            $0.limits.requestsPerSecond = 1
            $0.limits.requestBurst = 1
            $0.limits.exemptAddresses = []
            $0.limits.trustedProxies = proxies
        }
        return try clients.map { try server.request("GET", "/healthz", headers: [("X-Forwarded-For", $0)]).status }
    }

    @Test func behindATrustedProxyEachForwardedClientHasItsOwnBucket() throws {
        let statuses = try Self.statuses(
            trusting: ["127.0.0.1"], forwardedFor: ["203.0.113.1", "203.0.113.2", "203.0.113.1"])
        #expect(statuses == [200, 200, 429])
    }

    @Test func anUntrustedPeerCannotEscapeItsBucketWithForwardedFor() throws {
        let statuses = try Self.statuses(trusting: ["10.0.0.1"], forwardedFor: ["203.0.113.1", "203.0.113.2"])
        #expect(statuses == [200, 429])
    }

    @Test func sessionCreationHasItsOwnRate() async throws {
        let server = try TestServer {
            $0.limits.sessionsPerMinute = 2
            $0.limits.sessionBurst = 2
            $0.limits.exemptAddresses = []
        }
        _ = try server.createSession("counter")
        let id = try server.createSession("counter")
        let refused = try server.request("POST", "/sessions", body: #"{"reactor":"counter"}"#)
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") == "30")
        #expect(refused.text.contains("limits.sessionsPerMinute"))
        // Other routes are not counted against creation.
        #expect(try server.request("GET", "/sessions/\(id)").status == 200)
        await server.clock.advance(by: .seconds(30))
        #expect(try server.request("POST", "/sessions", body: #"{"reactor":"counter"}"#).status == 201)
    }

    @Test func subscribersAreCappedPerSessionAndInAll() throws {
        let server = try TestServer {
            $0.sse.maxSubscribersPerSession = 2
            $0.sse.maxSubscribers = 3
        }
        let first = try server.createSession("counter")
        let second = try server.createSession("counter")
        var streams = [
            try server.subscribe("/sessions/\(first)/events"), try server.subscribe("/sessions/\(first)/events"),
        ]
        for stream in streams { _ = try stream.nextEvent() }
        let perSession = try server.request("GET", "/sessions/\(first)/events")
        #expect(perSession.status == 503)
        #expect(perSession.text.contains("sse.maxSubscribersPerSession"))
        streams.append(try server.subscribe("/sessions/\(second)/events"))
        _ = try streams[2].nextEvent()
        let inAll = try server.request("GET", "/sessions/\(second)/events")
        #expect(inAll.status == 503)
        #expect(inAll.text.contains("sse.maxSubscribers"))
        #expect(
            try inAll.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "too_many_subscribers")
    }
}

extension LimitsTests {
    @Test(
        arguments: [
            ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"), ("10.1.2.3", "10.1.2.3"),
            ("256.1.1.1", nil), ("1.2.3", nil), ("1.2.3.4.5", nil), ("01.2.3.4", nil), ("1..3.4", nil),
            ("1.2.3.4 ", nil), ("", nil),
        ] as [(String, String?)])
    func dottedAddressesParseExactly(text: String, expected: String?) {
        #expect(IPAddress(text)?.description == expected)
    }
}
