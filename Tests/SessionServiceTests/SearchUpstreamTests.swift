import Examples
import Foundation
import HTTPServer
import Logs
import ReactorServerTesting
import ReactorsTesting
import SessionService
import Synchronization
import Testing

/// The `search` example calls its upstream with URLSession; here the upstream is a fake GitHub search
/// API on loopback, served by our own HTTP server.
@Suite(.offThePool) struct SearchUpstreamTests {
    /// Answers `GET /search/repositories?q=Q&page=N` with two repositories per page for pages 1–2,
    /// none after, and records the queries it saw.
    final class FakeGitHub: HTTPResponder {
        let seen = Mutex<[String]>([])

        func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
            let query = request.queryValue("q") ?? ""
            let page = Int(request.queryValue("page") ?? "") ?? 0
            seen.withLock { $0.append("\(request.path)?q=\(query)&page=\(page)") }
            guard request.path == "/search/repositories" else { return writer.respond(status: 404) }
            if query == "broken" { return writer.respond(status: 500, body: Array("upstream down".utf8)) }
            let items = page <= 2 ? (1...2).map { #"{"full_name":"\#(query)/repo-\#(page)-\#($0)"}"# } : []
            writer.respond(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Array(#"{"total_count":4,"items":[\#(items.joined(separator: ","))]}"#.utf8))
        }
    }

    @Test func searchesThroughURLSessionAndPages() async throws {
        let upstream = FakeGitHub()
        try await withHTTPServer(upstream, configure: { $0.loopCount = 1 }) { _, upstreamAddress in
            let upstreamPort = upstreamAddress.port
            let client = GitHubSearchClient(baseURL: "http://127.0.0.1:\(upstreamPort)/", timeout: 60)
            let server = try TestServer(configure: { $0.sessions.waitTimeoutSeconds = 120 }, search: client.search)
            let id = try server.createSession("search")
            let port = server.port
            // The effects run on the cooperative pool, where the other tests of this process queue too:
            // wait for answers off it, and patiently (the effect may queue behind many tests).
            @Sendable func post(_ body: String) async throws -> TestResponse {
                try await offPool {
                    try TestClient(port: port, readTimeout: .seconds(120)).request(
                        "POST", "/sessions/\(id)/actions?wait=true", body: body)
                }
            }
            let first = try await post(#"{"type":"updateQuery","query":"swift"}"#).json()
            let state = try #require(first["state"] as? [String: Any])
            #expect(state["query"] as? String == "swift")
            #expect(state["items"] as? [String] == ["swift/repo-1-1", "swift/repo-1-2"])
            #expect(state["isLoading"] as? Bool == false)
            #expect(state["nextPage"] as? Int == 2)

            let next = try await post(#"{"type":"loadNextPage"}"#).json()
            #expect(
                (next["state"] as? [String: Any])?["items"] as? [String] == [
                    "swift/repo-1-1", "swift/repo-1-2", "swift/repo-2-1", "swift/repo-2-2",
                ])
            #expect(
                upstream.seen.withLock { $0 } == [
                    "/search/repositories?q=swift&page=1", "/search/repositories?q=swift&page=2",
                ])

            // An upstream failure ends only that effect: the session keeps its state and keeps working.
            let failed = try await post(#"{"type":"updateQuery","query":"broken"}"#)
            #expect(failed.status == 200)
            #expect(server.logs.values.contains { $0.message.contains("effect failed") })
            let after = try await post(#"{"type":"updateQuery","query":"vapor"}"#).json()
            #expect((after["state"] as? [String: Any])?["items"] as? [String] == ["vapor/repo-1-1", "vapor/repo-1-2"])
        }
    }
}

extension SearchUpstreamTests {
    @Test func searchesAgainstAnUpstreamThatNeverAnswersDoNotPileUp() async throws {
        // An upstream that accepts requests and never answers them.
        let upstream = HoldingResponder()
        try await withHTTPServer(
            upstream,
            configure: {
                $0.loopCount = 1
                $0.requestHeadTimeout = .seconds(60)
                $0.idleTimeout = .seconds(60)
            }
        ) { _, address in
            // Answered only at the end, so shutdown need not wait for them.
            defer { upstream.answerAll(status: 503) }
            let upstreamPort = address.port
            // Deadlines on a test clock: none passes while the 20 searches start, however slowly (on the real clock
            // a busy CI machine once took longer than the deadline to start them, and a sixth search got in).
            let clock = TestClock()
            let client = GitHubSearchClient(
                baseURL: "http://127.0.0.1:\(upstreamPort)", timeout: 20, maxConcurrent: 2, maxQueued: 3, clock: clock)
            let ended = Recorder<String>()
            let searches = Task {
                await withTaskGroup(of: Void.self) { group in
                    for number in 0..<20 {
                        group.addTask {
                            let outcome: String
                            do {
                                _ = try await client.search(query: "q\(number)", page: 1)
                                outcome = "answered"
                            } catch {
                                outcome = "\(error)"
                            }
                            ended.record(outcome)
                        }
                    }
                }
            }
            try await eventually("15 searches refused at once, 2 in flight and 3 waiting on their deadlines") {
                ended.count == 15 && client.load == (2, 3) && clock.sleeperCount == 5
            }
            #expect(
                ended.values.allSatisfy { $0.contains("3 waiting") },
                "beyond 2 in flight and 3 waiting, searches fail at once: \(ended.values)")
            try await eventually("the upstream to see the 2 in flight") { upstream.requests.count == 2 }
            await clock.advance(by: .seconds(20))
            // A waiter whose turn came as the deadline passed has 1 ms left: the clock moves on until all end.
            try await eventually("every search to end at its deadline") {
                await clock.advance(by: .milliseconds(1))
                return ended.count == 20
            }
            await searches.value
            let outcomes = ended.values
            #expect(!outcomes.contains("answered"))
            #expect(
                outcomes.filter { $0.contains("within 20.0 s") }.count == 5,
                "the rest end at their deadline: \(outcomes)")
            // The three that waited had no time left when a turn came: at most a request each, never 20.
            let received = upstream.requests.count
            #expect(received >= 2 && received <= 5, "the upstream saw \(received) requests")
            #expect(client.load.running == 0 && client.load.waiting == 0)
        }
    }

    @Test func aQueryTooLongIsRefusedWithoutARequest() async throws {
        let client = GitHubSearchClient(baseURL: "http://127.0.0.1:9", timeout: 5)
        let long = String(repeating: "x", count: 1 << 20)
        do {
            _ = try await client.search(query: long, page: 1)
            Issue.record("a 1 MiB query was sent")
        } catch {
            let message = "\(error)"
            #expect(message.contains("at most 256"))
            #expect(message.utf8.count < 200, "the message does not repeat the query")
        }
    }
}
