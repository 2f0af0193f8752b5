import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// `limits.actionBytesPerMinute`: one client address cannot make the server keep action logs without
/// bound (issue 22: 30 sessions a minute with 4 MiB of action log each, ~170 MB a minute from one
/// address). Run as the attack ran, with loopback not exempt.
@Suite(.offThePool) struct ActionBytesLimitTests {
    /// A todo action of exactly `bytes` bytes of JSON.
    static func action(bytes: Int) -> String {
        let frame = #"{"type":"add","title":""}"#
        return #"{"type":"add","title":"\#(String(repeating: "x", count: bytes - frame.utf8.count))"}"#
    }

    static func post(_ server: TestServer, _ id: String, _ body: String, source: String? = nil) throws -> TestResponse {
        try TestClient(port: server.port, source: source).request("POST", "/sessions/\(id)/actions", body: body)
    }

    @Test func oneAddressSpendsItsBudgetAcrossSessionsThenWaits() async throws {
        let server = try TestServer {
            $0.limits.actionBytesPerMinute = 6000
            $0.limits.exemptAddresses = []
        }
        let sessions = try (0..<3).map { _ in try server.createSession("todo") }
        let action = Self.action(bytes: 1000)
        // Six actions of 1,000 bytes over three sessions: the budget of one minute, spent at once.
        for index in 0..<6 { #expect(try Self.post(server, sessions[index % 3], action).status == 202) }
        let refused = try Self.post(server, sessions[0], action)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rate_limited")
        // 1,000 bytes come back in 10 s at 6,000 a minute.
        #expect(refused.header("Retry-After") == "10")
        #expect(refused.errorMessage?.contains("limits.actionBytesPerMinute") == true, "\(refused.text)")
        #expect(refused.errorMessage?.contains("127.0.0.1") == true, "\(refused.text)")
        // A new session does not bring a new budget.
        let fresh = try server.createSession("todo")
        #expect(try Self.post(server, fresh, action).status == 429)
        // Nothing refused was kept.
        var logged = 0
        for id in sessions + [fresh] {
            let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
            logged += (log["actions"] as? [Any])?.count ?? 0
        }
        #expect(logged == 6)
        // Another address has its own budget; this one's comes back with time.
        #expect(try Self.post(server, sessions[1], action, source: "127.0.0.2").status == 202)
        await server.clock.advance(by: .seconds(9))
        #expect(try Self.post(server, sessions[0], action).status == 429)
        await server.clock.advance(by: .seconds(1))
        #expect(try Self.post(server, sessions[0], action).status == 202)
        let metrics = try server.request("GET", "/metrics").text
        #expect(metrics.contains(#"reactor_limit_refusals_total{limit="limits.actionBytesPerMinute"} 3"#))
    }

    @Test func anActionLargerThanTheBudgetNeedsAllOfIt() async throws {
        let server = try TestServer {
            $0.limits.actionBytesPerMinute = 600
            $0.limits.exemptAddresses = []
        }
        let id = try server.createSession("todo")
        // Larger than a minute's budget: it passes with the budget whole, and spends it.
        #expect(try Self.post(server, id, Self.action(bytes: 1000)).status == 202)
        let refused = try Self.post(server, id, Self.action(bytes: 100))
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") == "10")
        await server.clock.advance(by: .seconds(59))
        #expect(try Self.post(server, id, Self.action(bytes: 1000)).status == 429, "never before the budget is whole")
        await server.clock.advance(by: .seconds(1))
        #expect(try Self.post(server, id, Self.action(bytes: 1000)).status == 202)
    }

    @Test func onlyRequestsThatMayActSpendTheBudget() throws {
        let server = try TestServer {
            $0.limits.actionBytesPerMinute = 1000
            $0.limits.exemptAddresses = []
            $0.auth.sessions = "token"
        }
        let created = try server.request("POST", "/sessions", body: #"{"reactor":"todo"}"#).json()
        let id = try #require(created["id"] as? String)
        let token = try #require(created["token"] as? String)
        let client = try server.connect()
        let action = Self.action(bytes: 1000)
        func post(_ credential: String) throws -> Int {
            let authorization = [("Authorization", "Bearer \(credential)")]
            return try client.request("POST", "/sessions/\(id)/actions", headers: authorization, body: action).status
        }
        for _ in 0..<3 { #expect(try post("wrong") == 401) }
        #expect(try post(token) == 202)
    }

    @Test func loopbackIsExemptByDefaultAndZeroTurnsItOff() throws {
        for exempt in [true, false] {
            let server = try TestServer {
                $0.limits.actionBytesPerMinute = exempt ? 100 : 0
                if !exempt { $0.limits.exemptAddresses = [] }
            }
            let id = try server.createSession("todo")
            for _ in 0..<5 { #expect(try Self.post(server, id, Self.action(bytes: 1000)).status == 202) }
        }
    }

    @Test func theDefaultIsOutOfReachOfAnOrdinaryClient() {
        let defaults = ServerConfiguration().limits
        // At the request rate limit, every request an action, a client meets it only with actions averaging
        // over 2.7 KB, and one address adds at most 16 MiB of action log a minute (it was ~170 MB).
        #expect(defaults.actionBytesPerMinute == 16 << 20)
        #expect(defaults.actionBytesPerMinute / (defaults.requestsPerSecond * 60) > 2700)
    }
}
