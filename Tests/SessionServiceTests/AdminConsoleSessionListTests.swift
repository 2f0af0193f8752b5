import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// The console's session list in a real Chromium (`AdminConsole+SessionList.swift`,
/// `AdminConsole+ListStream.swift`): its versions live over ONE `/events` stream, counted by the server
/// through `/metrics`; a new set of sessions re-opens it, a deleted session leaves at once, a hidden tab
/// lets go of it, a restart heals it; past `sse.maxSessionsPerStream` the rest is read with the list.
@Suite(.offThePool) struct AdminConsoleSessionListTests {
    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func theListFollowsItsSessionsOverOneStreamAndRecoversAfterARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent(
            "console-list-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: data) }
        let servers = AdminConsoleTests.Servers(data: data)
        let port = try servers.start(port: 0)
        let base = "http://127.0.0.1:\(port)"
        @Sendable func call(_ method: String, _ path: String, _ body: String? = nil) async throws -> TestResponse {
            try await offPool {
                try TestClient(port: port, readTimeout: .seconds(60)).request(method, path, body: body)
            }
        }
        @Sendable func counts() async throws -> Streams { try await Self.counts(port) }
        // Each created and read once: a session the server has not loaded yet cannot change, and the console
        // does not load it (it follows only sessions in memory; the list shows the others as read).
        for id in ["s1", "s2", "s3"] {
            #expect(try await call("POST", "/sessions", #"{"reactor":"counter","id":"\#(id)"}"#).status == 201)
            #expect(try await call("GET", "/sessions/\(id)").status == 200)
        }

        try await Browser.run("console-list") { browser in
            try await browser.open(base + "/admin/console")
            try await browser.find("#token").type(TestServer.adminToken + WebElement.Key.enter)
            try await browser.wait(
                "the three sessions listed, live over the stream",
                until: AdminConsoleTests.connection("connected") + " && " + Self.liveRows(["s1", "s2", "s3"]))
            #expect(
                try await browser.execute("return document.getElementById('connection').textContent") as? String
                    == "connected: versions live over one stream (3 sessions)")
            // One /events stream carries all three: one opened, no one-session stream, three subscriptions.
            #expect(try await counts() == Streams(opened: 1, single: 0, subscribers: 3))

            for _ in 0..<2 {
                #expect(try await call("POST", "/sessions/s2/actions?wait=true", #"{"type":"increase"}"#).status == 200)
            }
            try await browser.wait(
                "s2 at version 2 in the list, told by the stream", until: Self.listed("s2", version: 2, via: "stream"))
            #expect(
                try await counts() == Streams(opened: 1, single: 0, subscribers: 3), "a new version re-opens nothing")
            try await browser.screenshot("list-live")

            // A new session joins at the next read of the list: the one stream is replaced by one over four.
            #expect(try await call("POST", "/sessions", #"{"reactor":"counter","id":"s4"}"#).status == 201)
            #expect(try await call("GET", "/sessions/s4").status == 200)
            try await browser.find("#refresh").click()
            try await browser.wait("s4 listed and live", until: Self.liveRows(["s1", "s2", "s3", "s4"]))
            try await eventually("the old stream to close: one stream, four subscriptions") {
                try await counts() == Streams(opened: 2, single: 0, subscribers: 4)
            }
            #expect(try await call("POST", "/sessions/s4/actions?wait=true", #"{"type":"increase"}"#).status == 200)
            try await browser.wait(
                "s4 at version 1, told by the stream", until: Self.listed("s4", version: 1, via: "stream"))

            // A deleted session's part ends on the stream: its row goes at once, the others stay live.
            #expect(try await call("DELETE", "/sessions/s1").status == 204)
            try await browser.wait(
                "s1 gone from the list, told by the stream",
                until: "document.querySelector('#sessions tr[data-session=s1]') === null && "
                    + "document.getElementById('sessionsNote').textContent.includes('Session s1 deleted at') && "
                    + Self.liveRows(["s2", "s3", "s4"]))
            try await browser.screenshot("list-after-delete")
            try await browser.find("#refresh").click()
            try await browser.wait(
                "the list read again, three live",
                until:
                    "document.getElementById('sessionsNote').textContent"
                    + ".startsWith('3 sessions; 3 live over one stream')"
            )
            try await eventually("one stream over the three left") {
                try await counts() == Streams(opened: 3, single: 0, subscribers: 3)
            }

            // A hidden tab lets go of its stream (a followed session would never expire), and takes it up when shown.
            _ = try await browser.execute(
                "Object.defineProperty(document, 'hidden', { value: true, configurable: true }); "
                    + "document.dispatchEvent(new Event('visibilitychange'));"
            )
            try await browser.wait(
                "the console to say it paused",
                until: AdminConsoleTests.connection("idle")
                    + " && document.getElementById('connection').textContent.includes('hidden')")
            try await eventually("the hidden tab's stream to close") {
                try await counts() == Streams(opened: 3, single: 0, subscribers: 0)
            }
            _ = try await browser.execute(
                "delete document.hidden; document.dispatchEvent(new Event('visibilitychange'));")
            try await browser.wait(
                "the list live again once shown, the same set resumed from its cursor",
                until: AdminConsoleTests.connection("connected")
                    + " && document.getElementById('connection').textContent.includes('resumed where it was') && "
                    + Self.liveRows(["s2", "s3", "s4"]))
            #expect(try await counts() == Streams(opened: 4, single: 0, subscribers: 3))
            #expect(try await call("POST", "/sessions/s2/actions?wait=true", #"{"type":"increase"}"#).status == 200)
            try await browser.wait(
                "s2 at version 3 over the resumed stream", until: Self.listed("s2", version: 3, via: "stream"))

            try await offPool { servers.stop() }
            try await browser.wait(
                "the console to say the server is unreachable",
                until: AdminConsoleTests.connection("unreachable")
                    + " && document.getElementById('connection').textContent.includes('server unreachable')")
            try await browser.screenshot("list-server-down")
            #expect(try servers.start(port: port) == port)
            try await browser.wait(
                "the console to list the sessions again",
                until: AdminConsoleTests.connection("connected") + " && " + Self.rows(["s2", "s3", "s4"]))
            // A session that is used again comes back into memory and, at the next read of the list, onto the stream.
            #expect(try await call("POST", "/sessions/s3/actions?wait=true", #"{"type":"increase"}"#).status == 200)
            try await browser.find("#refresh").click()
            try await browser.wait("s3 live again", until: Self.liveRows(["s3"]))
            #expect(try await call("POST", "/sessions/s3/actions?wait=true", #"{"type":"increase"}"#).status == 200)
            try await browser.wait(
                "s3 at version 2, told by the stream", until: Self.listed("s3", version: 2, via: "stream"))
            // The restarted server has seen one stream, carrying exactly the rows shown live.
            let live = try #require(
                try await browser.execute("return document.querySelectorAll('#sessions td[data-live]').length") as? Int)
            #expect(try await counts() == Streams(opened: 1, single: 0, subscribers: live))
            try await browser.screenshot("list-recovered")
            // Requests to the stopped server failed; nothing else may be in the log.
            try await browser.expectNoConsoleErrors(expecting: AdminConsoleTests.serverDown)
        }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func pastTheStreamLimitTheRestIsReadWithTheListAndAFilterMovesTheStream() async throws {
        let server = try TestServer { $0.sse.maxSessionsPerStream = 2 }
        let port = server.port
        for id in ["a", "b", "c"] { try server.createSession("counter", id: id) }
        @Sendable func counts() async throws -> Streams { try await Self.counts(port) }

        try await Browser.run("console-limit") { browser in
            try await browser.open("http://127.0.0.1:\(port)/admin/console")
            try await browser.find("#token").type(TestServer.adminToken + WebElement.Key.enter)
            try await browser.wait(
                "a and b live, c read with the list, and the note saying why",
                until: AdminConsoleTests.connection("connected") + " && " + Self.liveRows(["a", "b"])
                    + " && document.querySelector('#sessions tr[data-session=c] td.stale') !== null"
                    + " && document.getElementById('sessionsNote').textContent.includes("
                    + "'1 more read every 10 s: a stream follows at most 2 (sse.maxSessionsPerStream)')"
            )
            #expect(try await counts() == Streams(opened: 1, single: 0, subscribers: 2))
            try await browser.screenshot("limit")

            try await browser.find("#filter").type("c")
            try await browser.wait(
                "c live once the filter shows it alone",
                until: Self.liveRows(["c"]) + " && document.querySelector('#sessions tr[data-session=a]') === null")
            try await eventually("one stream, over c alone") {
                try await counts() == Streams(opened: 2, single: 0, subscribers: 1)
            }
            #expect(
                try server.request("POST", "/sessions/c/actions?wait=true", body: #"{"type":"increase"}"#).status == 200
            )
            try await browser.wait(
                "c at version 1, told by the stream", until: Self.listed("c", version: 1, via: "stream"))
            try await browser.screenshot("filtered")
            try await browser.expectNoConsoleErrors()
        }
    }

    /// The console's event-stream parser (WHATWG rules) in the browser that runs it: every stream, cut in two at
    /// every offset and also fed one character at a time, gives the same events.
    static let parserCases: [(stream: String, events: [String])] = [
        ("event: state\nid: 3f0c9a1e:1.\ndata: {\"session\":\"a\"}\n\n", ["state|{\"session\":\"a\"}|3f0c9a1e:1."]),
        ("data: x\r\n\r\ndata: y\r\n\r\n", ["message|x|", "message|y|"]),
        ("data: x\r\rdata: y\r\r", ["message|x|", "message|y|"]),
        ("data: a\ndata: b\n\n", ["message|a\nb|"]),
        (": keep-alive\n\ndata: z\n\n", ["message|z|"]),
        ("\u{FEFF}data: bom\n\n", ["message|bom|"]),
        ("id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", ["message|a|7", "message|b|7", "message|c|"]),
        ("data:x\ndata:  y\n\n", ["message|x\n y|"]),
        ("event: state\n\ndata\n\n", ["message||"]),
        ("id: a\u{0}b\nretry: 10\ndata: x\n\n", ["message|x|"]),
        ("data: unfinished\n", []),
    ]

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func theParserFollowsTheEventStreamRulesAtEveryCut() async throws {
        let server = try TestServer()
        try await Browser.run("console-parser") { browser in
            try await browser.open("http://127.0.0.1:\(server.port)/admin/console")
            for (stream, events) in Self.parserCases {
                let answers = try #require(
                    try await browser.execute(Self.parseAtEveryCut, [stream]) as? [[String]],
                    "no answer for \(stream.debugDescription)")
                for (cut, answer) in answers.enumerated() {
                    #expect(
                        answer == events,
                        """
                        \(stream.debugDescription) \
                        \(cut < stream.utf16.count + 1 ? "cut at \(cut)" : "fed one character at a time")
                        """
                    )
                }
            }
            try await browser.expectNoConsoleErrors()
        }
    }

    /// Feeds `arguments[0]` to a fresh parser cut in two at every offset, then one character at a time.
    static let parseAtEveryCut = """
        const stream = arguments[0];
        const run = (chunks) => {
          const events = [];
          const parser = new EventStreamParser((event) => events.push(event.type + "|" + event.data + "|" + event.id));
          for (const chunk of chunks) parser.push(chunk);
          return events;
        };
        const answers = [];
        for (let cut = 0; cut <= stream.length; cut++) answers.push(run([stream.slice(0, cut), stream.slice(cut)]));
        answers.push(run(Array.from(stream)));
        return answers;
        """

    /// What the server on `port` counts: `/events` streams opened, one-session streams opened, open subscriptions.
    static func counts(_ port: Int) async throws -> Streams {
        let text = try await offPool { try TestClient(port: port).request("GET", "/metrics").text }
        return Streams(
            opened: sample(text, #"reactor_http_requests_total{route="GET /events",status="200"}"#),
            single: sample(text, #"reactor_http_requests_total{route="GET /sessions/{id}/events",status="200"}"#),
            subscribers: sample(text, "reactor_subscribers"))
    }

    /// What the server counts of the console's streams.
    struct Streams: Equatable, CustomStringConvertible {
        var opened: Int
        var single: Int
        var subscribers: Int
        var description: String {
            "\(opened) /events streams opened, \(single) one-session streams, \(subscribers) subscriptions"
        }
    }

    /// The value of the first sample line that starts with `name` (0 when there is none).
    static func sample(_ text: String, _ name: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(line.dropFirst(name.count + 1)) ?? -1
        }
        return 0
    }

    static func rows(_ ids: [String]) -> String {
        ids.map { "document.querySelector('#sessions tr[data-session=\($0)]') !== null" }.joined(separator: " && ")
    }

    static func liveRows(_ ids: [String]) -> String {
        ids.map { "document.querySelector('#sessions tr[data-session=\($0)] td[data-live=true]') !== null" }.joined(
            separator: " && ")
    }

    static func listed(_ id: String, version: Int, via: String) -> String {
        "(document.querySelector('#sessions tr[data-session=\(id)] td[data-live=true]') || {}).textContent"
            + " === '\(version)' && "
            + "document.querySelector('#sessions tr[data-session=\(id)] td[data-live=true]').dataset.via === '\(via)'"
    }

}
