import Foundation
import HTTPServer
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM on a durable `reactor-server` with work in flight: what finishes within
/// `http.shutdownDeadlineSeconds` is answered and journaled; what does not is cut off and, after a
/// restart, shows as interrupted. Either way the process exits 0 and nothing acknowledged is lost.
@Suite(.offThePool) struct GracefulShutdownTests {
    static let token = "graceful-admin-token"
    static var admin: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    /// A durable server whose `search` reactor asks `upstream`, which the test answers when it chooses.
    static func start(_ directory: String, upstream: SocketAddress, deadline: Int = 30) async throws -> ServerProcess {
        try await ServerProcess.start(
            arguments: [
                "--data-dir", directory, "--set", "search.baseURL=http://127.0.0.1:\(upstream.port)",
                "--set", "search.timeoutSeconds=600", "--set", "http.shutdownDeadlineSeconds=\(deadline)",
            ],
            environment: ["REACTOR_ADMIN_TOKEN": token])
    }

    /// Starts a search (`?wait=true`) and 50 counter actions; returns once the search waits on the
    /// upstream and the 50 are acknowledged, with the connection still waiting for the search's answer.
    static func startWork(_ server: ServerProcess, upstream: HoldingResponder) async throws -> (
        waiting: TestClient, setup: TestClient
    ) {
        let setup = try server.client()
        #expect(try setup.request("POST", "/sessions", body: #"{"reactor":"search","id":"finder"}"#).status == 201)
        #expect(try setup.request("POST", "/sessions", body: #"{"reactor":"counter","id":"tally"}"#).status == 201)
        let waiting = try server.client()
        let body = #"{"type":"updateQuery","query":"swift"}"#
        try waiting.send(
            "POST /sessions/finder/actions?wait=true HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        try await upstream.requests.next("the search to reach the upstream") { $0.query("q") == "swift" }
        let action =
            "POST /sessions/tally/actions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            + "Content-Length: 19\r\n\r\n{\"type\":\"increase\"}"
        try setup.send(String(repeating: action, count: 50))
        for seq in 1...50 { #expect(try setup.readResponse().json()["seq"] as? Int == seq) }
        return (waiting, setup)
    }

    @Test func workInFlightFinishesAndIsDurable() async throws {
        let upstream = HoldingResponder()
        try await withHTTPServer(upstream) { _, address in
            try await withTemporaryDirectory("graceful") { directory in
                var server = try await Self.start(directory, upstream: address)
                let (waiting, _) = try await Self.startWork(server, upstream: upstream)
                server.process.signal(SIGTERM)
                try await server.process.errorLines.next("the server to begin shutting down") {
                    $0.contains(#""msg":"shutting down""#)
                }
                // Shutting down, with the search still in flight: the upstream answers now.
                let items = #"{"items":[{"full_name":"swift/one"},{"full_name":"swift/two"}]}"#
                upstream.requests.values[0].writer.respond(
                    status: 200, headers: ["Content-Type": "application/json"], body: Array(items.utf8))
                let answer = try waiting.readResponse()
                #expect(answer.status == 200)
                #expect(answer.header("Connection") == "close")
                #expect(try answer.json()["version"] as? Int == 3)
                #expect(try await server.process.waitForExit() == .exited(0))

                server = try await Self.start(directory, upstream: address)
                let client = try server.client()
                let finder = try client.request("GET", "/sessions/finder").json()
                #expect(finder["version"] as? Int == 3)
                #expect((finder["state"] as? [String: Any])?["items"] as? [String] == ["swift/one", "swift/two"])
                let log =
                    try client.request("GET", "/admin/sessions/finder/actions", headers: Self.admin).json()["actions"]
                    as? [[String: Any]]
                #expect(
                    log?.map { $0["interrupted"] as? Bool ?? false } == [false], "a finished action is not interrupted")
                #expect(try client.request("GET", "/sessions/tally").json()["version"] as? Int == 50)
                #expect(try await server.stop() == .exited(0))
            }
        }
    }

    @Test func workStillInFlightAtTheDeadlineIsCutOffAndMarkedInterrupted() async throws {
        let upstream = HoldingResponder()
        try await withHTTPServer(upstream) { _, address in
            try await withTemporaryDirectory("graceful") { directory in
                // The upstream never answers: at the 1 s deadline the waiting request is cut off with a 503.
                var server = try await Self.start(directory, upstream: address, deadline: 1)
                let (waiting, _) = try await Self.startWork(server, upstream: upstream)
                #expect(try await server.stop(signal: SIGTERM) == .exited(0))
                let cutOff = try waiting.readResponse()
                #expect(cutOff.status == 503)
                #expect(cutOff.errorCode == "shutting_down")
                #expect(cutOff.header("Connection") == "close")
                #expect(try waiting.readToEnd().isEmpty, "nothing after the 503")

                server = try await Self.start(directory, upstream: address)
                let client = try server.client()
                // Version 2 as stored, and one more: the search recovered from its cut-off effect (spinner off).
                let finder = try client.request("GET", "/sessions/finder").json()
                #expect(
                    finder["version"] as? Int == 3
                        && (finder["state"] as? [String: Any])?["isLoading"] as? Bool == false, "\(finder)")
                let log =
                    try client.request("GET", "/admin/sessions/finder/actions", headers: Self.admin).json()["actions"]
                    as? [[String: Any]]
                #expect(log?.map { $0["interrupted"] as? Bool ?? false } == [true])
                #expect(try client.request("GET", "/sessions/tally").json()["version"] as? Int == 50)
                #expect(try await server.stop() == .exited(0))
                #expect(
                    upstream.requests.values.map { $0.query("q") } == ["swift"], "an interrupted action is never re-run"
                )
                upstream.answerAll(status: 503)
            }
        }
    }

    /// An effect no request waits on is in-flight work too: it gets the deadline to finish, and its
    /// action is journaled as completed, not interrupted.
    @Test func anEffectNoRequestWaitsOnStillGetsTheDeadline() async throws {
        let upstream = HoldingResponder()
        try await withHTTPServer(upstream) { _, address in
            try await withTemporaryDirectory("graceful") { directory in
                var server = try await Self.start(directory, upstream: address)
                var client = try server.client()
                #expect(
                    try client.request("POST", "/sessions", body: #"{"reactor":"search","id":"finder"}"#).status == 201)
                #expect(
                    try client.request(
                        "POST", "/sessions/finder/actions", body: #"{"type":"updateQuery","query":"swift"}"#
                    ).json()["seq"] as? Int == 1)
                try await upstream.requests.next("the search to reach the upstream") { $0.query("q") == "swift" }
                server.process.signal(SIGTERM)
                try await server.process.errorLines.next("the server to begin shutting down") {
                    $0.contains(#""msg":"shutting down""#)
                }
                // No request is left, yet the server waits for the effect until the deadline (30 s).
                let items = #"{"items":[{"full_name":"swift/one"}]}"#
                upstream.requests.values[0].writer.respond(
                    status: 200, headers: ["Content-Type": "application/json"], body: Array(items.utf8))
                #expect(try await server.process.waitForExit() == .exited(0))
                #expect(
                    !server.process.errorLines.values.contains { $0.contains("effects still running at shutdown") },
                    "nothing was cut off")

                server = try await Self.start(directory, upstream: address)
                client = try server.client()
                let finder = try client.request("GET", "/sessions/finder").json()
                #expect(finder["version"] as? Int == 3)
                #expect((finder["state"] as? [String: Any])?["items"] as? [String] == ["swift/one"])
                let log =
                    try client.request("GET", "/admin/sessions/finder/actions", headers: Self.admin).json()["actions"]
                    as? [[String: Any]]
                #expect(
                    log?.map { $0["interrupted"] as? Bool ?? false } == [false], "a finished action is not interrupted")
                #expect(try await server.stop() == .exited(0))
            }
        }
    }

    /// The effect that outlived the deadline is cancelled, and has ended, before the process exits:
    /// its request to the upstream is closed, no completion is journaled for it (after a restart it
    /// is interrupted, with either backend), and nothing of it runs on after the server.
    @Test(arguments: TestStorage.all)
    func anEffectOutlivingTheDeadlineIsCancelledAndEndsBeforeTheProcess(storage: TestStorage) async throws {
        try await withSilentUpstream { upstream in
            try await storage.withPlace("graceful") { place in
                let arguments =
                    place.arguments + [
                        "--set", "search.baseURL=http://127.0.0.1:\(upstream.port)", "--set",
                        "search.timeoutSeconds=600",
                    ]
                var server = try await ServerProcess.start(
                    arguments: arguments + ["--set", "http.shutdownDeadlineSeconds=1"],
                    environment: ["REACTOR_ADMIN_TOKEN": Self.token])
                var client = try server.client()
                #expect(
                    try client.request("POST", "/sessions", body: #"{"reactor":"search","id":"finder"}"#).status == 201)
                #expect(
                    try client.request(
                        "POST", "/sessions/finder/actions", body: #"{"type":"updateQuery","query":"swift"}"#
                    ).json()["seq"] as? Int == 1)
                try await upstream.events.next("the search to reach the upstream") {
                    $0.head?.contains("q=swift") ?? false
                }

                #expect(try await server.stop(signal: SIGTERM) == .exited(0))
                let notice = try #require(
                    server.process.errorLines.values.first {
                        $0.contains("effects still running at shutdown were cancelled")
                    },
                    "the server says it cancelled the effect still running")
                #expect(notice.contains(#""effects":1"#), "one effect task was cut off: \(notice)")
                #expect(notice.contains(#""ended":true"#), "it ended before the journal closed: \(notice)")
                try await upstream.events.next("the cancelled search's connection to close") {
                    $0 == .closed(connection: 0)
                }

                server = try await ServerProcess.start(
                    arguments: arguments, environment: ["REACTOR_ADMIN_TOKEN": Self.token])
                client = try server.client()
                // Version 2 as stored, and the search's recovery from its cut-off effect.
                let finder = try client.request("GET", "/sessions/finder").json()
                #expect(
                    finder["version"] as? Int == 3
                        && (finder["state"] as? [String: Any])?["isLoading"] as? Bool == false, "\(finder)")
                let log =
                    try client.request("GET", "/admin/sessions/finder/actions", headers: Self.admin).json()["actions"]
                    as? [[String: Any]]
                #expect(
                    log?.map { $0["interrupted"] as? Bool ?? false } == [true],
                    "cut off at shutdown, the action reads as interrupted")
                #expect(try await server.stop() == .exited(0))
                #expect(upstream.events.values.compactMap(\.head).count == 1, "an interrupted action is never re-run")
            }
        }
    }
}
