import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// The admin console (and the page at `/` beside it) in a real Chromium: the token kept in the tab,
/// the session list, actions by button and by JSON with the server's error, stub mode and a forced
/// state, the time slider with what changed, fork, labelled controls, and both pages healing by
/// themselves when the server restarts on the same port over the same data folder.
@Suite(.offThePool) struct AdminConsoleTests {
    /// The server of the test, replaced by a new one at the restart.
    final class Servers: @unchecked Sendable {
        var current: TestServer?
        let data: URL

        init(data: URL) { self.data = data }

        func start(port: Int) throws -> Int {
            let server = try TestServer { configuration in
                configuration.http.port = port
                configuration.storage.memoryOnly = false
                configuration.storage.dataDir = self.data.path
            }
            current = server
            return server.port
        }

        /// Shuts the server down (graceful: streams end, the journal closes).
        func stop() { current = nil }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func consoleDrivesASessionAndBothPagesRecoverAfterARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent(
            "console-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: data) }
        let servers = Servers(data: data)
        let port = try servers.start(port: 0)
        let base = "http://127.0.0.1:\(port)"
        let token = TestServer.adminToken
        @Sendable func post(_ path: String, _ body: String) async throws -> TestResponse {
            try await offPool {
                try TestClient(port: port, readTimeout: .seconds(60)).request("POST", path, body: body)
            }
        }
        #expect(try await post("/sessions", #"{"reactor":"counter","id":"c1"}"#).status == 201)
        for _ in 0..<2 {
            #expect(try await post("/sessions/c1/actions?wait=true", #"{"type":"increase"}"#).status == 200)
        }

        try await Browser.run("console") { browser in
            try await browser.open(base + "/admin/console")
            try await browser.wait(
                "the console to ask for the token",
                until: Self.connection("idle")
                    + " && document.getElementById('connection').textContent.includes('admin token')")
            try await browser.screenshot("console-no-token")

            // A wrong token is refused and said so; the right one, typed and sent with Enter, connects.
            try await browser.find("#token").type("wrong" + WebElement.Key.enter)
            try await browser.wait("the console to say the token was refused", until: Self.connection("refused"))
            try await browser.expectNoConsoleErrors(expecting: [
                "/admin/sessions - Failed to load resource: the server responded with a status of 401"
            ])
            try await browser.find("#token").type(token + WebElement.Key.enter)
            try await browser.wait(
                "the console to connect and list c1",
                until: Self.connection("connected")
                    + " && document.querySelector('#sessions button[data-session=c1]') !== null")
            let kept =
                try await browser.execute(
                    "return [location.href, sessionStorage.getItem('reactor-server.adminToken'), localStorage.length, "
                        + "performance.getEntriesByType('resource').map((e) => e.name).join(' ')]"
                ) as? [Any]
            #expect(kept?[1] as? String == token, "the token is kept in the tab")
            #expect(kept?[2] as? Int == 0, "nothing goes to localStorage")
            #expect(
                !(kept?[0] as? String ?? token).contains(token) && !(kept?[3] as? String ?? token).contains(token),
                "the token never appears in a URL")

            try await browser.find("#sessions button[data-session=c1]").click()
            try await browser.wait(
                "c1's live state at version 2 and its two actions",
                until: Self.live(version: 2) + " && " + Self.logRows(2))
            try await Self.exampleButton(browser, "increase").click()
            try await browser.wait(
                "the button's action to give version 3 and a third log row",
                until: Self.live(version: 3) + " && " + Self.logRows(3))

            try await browser.find("#actionEditor").clear()
            try await browser.find("#actionEditor").type(#"{"type":"jump"}"#)
            try await browser.find("#sendAction").click()
            try await browser.wait(
                "the server's error under the editor",
                until: "document.getElementById('actionResult').textContent.includes('unknown_action')")
            try await browser.expectNoConsoleErrors(expecting: [
                "/sessions/c1/actions - Failed to load resource: the server responded with a status of 422"
            ])

            try await browser.find("#stub").click()
            try await browser.wait(
                "stub mode on, in the list too",
                until:
                    "document.getElementById('stubResult').textContent.includes('Stub mode on') && "
                    + "!document.getElementById('forceState').disabled && "
                    + "document.querySelector('#sessions tbody tr.selected td:last-child').textContent === 'on'"
            )
            try await browser.find("#stateEditor").clear()
            try await browser.find("#stateEditor").type(#"{"value": 100}"#)
            try await browser.find("#forceState").click()
            try await browser.wait(
                "the forced state live as version 4",
                until: Self.live(version: 4) + " && document.getElementById('liveState').textContent.includes('100')")
            try await Self.exampleButton(browser, "decrease").click()
            try await browser.wait(
                "the stubbed action in the log",
                until: Self.logRows(4)
                    + " && document.querySelector('#actionLog tbody tr:last-child').textContent.includes('stubbed')")
            try await browser.screenshot("console-stubbed")

            // Time travel by keyboard: three steps left from the live version 4.
            try await browser.find("#versionSlider").type(String(repeating: WebElement.Key.arrowLeft, count: 3))
            try await browser.wait(
                "version 1 with what changed from version 0",
                until:
                    "document.getElementById('versionLabel').textContent === '1 of 4' && "
                    + "document.getElementById('versionState').textContent.includes('\"value\": 1') && "
                    + "document.getElementById('diff').textContent.includes('/value: 0 → 1') && "
                    + "!document.getElementById('followLive').checked"
            )
            try await browser.screenshot("console-time-travel")

            try await browser.find("#forkId").type("c1-fork")
            try await browser.find("#fork").click()
            try await browser.wait(
                "the fork selected, live at version 1 holding value 1",
                until: "document.getElementById('detailTitle').textContent.includes('c1-fork') && "
                    + Self.live(version: 1)
                    + " && document.getElementById('liveState').textContent.includes('\"value\": 1') && "
                    + "document.getElementById('forkResult').textContent.includes('Forked from c1 at version 1')"
            )

            let unnamed = try await browser.execute(Self.unnamedControls) as? [String]
            #expect(unnamed == [], "every control has a label or an accessible name")
            // The fork starts at version 1: asking for what changed since version 0 learns that 0 is not kept.
            try await browser.wait(
                "the console to say the fork keeps no version 0",
                until:
                    "document.getElementById('diff').textContent.includes('Version 0 is no longer kept') && "
                    + "document.getElementById('versionSlider').min === '1'"
            )
            try await browser.expectNoConsoleErrors(expecting: [
                "/admin/sessions/c1-fork/versions/0 - Failed to load resource: "
                    + "the server responded with a status of 410"
            ])

            // The page at `/` on the fork, in a second window; then the server restarts under both.
            let console = try await browser.window()
            let page = try await browser.newWindow()
            try await browser.switchTo(window: page)
            try await browser.open(base + "/?session=c1-fork")
            try await browser.wait("the page to show the fork live", until: WebPageTests.live(version: 1))

            try await offPool { servers.stop() }
            try await browser.wait(
                "the page to say the server is unreachable",
                until:
                    "document.getElementById('streamStatus').dataset.kind === 'retrying' && "
                    + "document.getElementById('streamStatus').textContent.includes('server unreachable')"
            )
            try await browser.screenshot("page-server-down")
            try await browser.switchTo(window: console)
            try await browser.wait(
                "the console to say the server is unreachable",
                until: Self.connection("unreachable")
                    + " && document.getElementById('connection').textContent.includes('server unreachable')")
            try await browser.screenshot("console-server-down")

            #expect(try servers.start(port: port) == port)
            try await browser.wait(
                "the console to reconnect by itself",
                until: Self.connection("connected")
                    + " && document.getElementById('streamStatus').dataset.kind === 'live'")
            #expect(try await post("/sessions/c1-fork/actions?wait=true", #"{"type":"increase"}"#).status == 200)
            try await browser.wait(
                "the console to show the fork's new version", until: Self.live(version: 2) + " && " + Self.logRows(1))
            try await browser.screenshot("console-recovered")
            try await browser.switchTo(window: page)
            try await browser.wait(
                "the page to show the new version live",
                until: WebPageTests.live(version: 2) + " && " + WebPageTests.state(contains: #""value": 2"#))
            try await browser.screenshot("page-recovered")
            // While the server was down, requests to it failed: nothing else may be in the log. A request
            // sent on a kept-alive connection just as the stopping server closed it is reset, or finds
            // its socket no longer connected, instead.
            try await browser.expectNoConsoleErrors(expecting: AdminConsoleTests.serverDown)
        }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func inTokenModeThePageUsesItsTokensAndTheConsolePolls() async throws {
        // A memory-only server: no version can be read back, so the console shows versions, not states.
        let server = try TestServer { $0.auth.sessions = "token" }
        let port = server.port
        let base = "http://127.0.0.1:\(port)"
        let created = try await offPool {
            try TestClient(port: port).request("POST", "/sessions", body: #"{"reactor":"counter","id":"t1"}"#)
        }
        let token = try #require(try created.json()["token"] as? String)

        try await Browser.run("token-mode") { browser in
            // The page keeps the token of the session it creates and sends it (header, or access_token for the stream).
            try await browser.open(base + "/")
            try await browser.wait("the picker to load", until: "!document.getElementById('reactor').disabled")
            try await browser.find("#create").click()
            try await browser.wait(
                "the page's own session, live through its token", until: WebPageTests.live(version: 0))
            try await WebPageTests.button(browser, "increase").click()
            try await browser.wait("its action to give version 1", until: WebPageTests.live(version: 1))
            #expect(
                try await browser.execute(
                    "return location.search.startsWith('?session=') && !location.href.includes('token')") as? Bool
                    == true)

            // A link to someone else's session, without its token: the page says it has no access.
            try await browser.open(base + "/?session=t1")
            try await browser.wait(
                "the page to say it has no access",
                until:
                    "document.getElementById('streamStatus').dataset.kind === 'denied' && "
                    + "document.getElementById('streamStatus').textContent.includes('unauthorized')"
            )
            try await browser.expectNoConsoleErrors(expecting: [
                "/sessions/t1 - Failed to load resource: the server responded with a status of 401"
            ])

            // The console cannot open t1's stream without its token: it follows t1 through the admin routes.
            try await browser.open(base + "/admin/console")
            try await browser.find("#token").type(TestServer.adminToken + WebElement.Key.enter)
            try await browser.wait(
                "the console to list t1",
                until: Self.connection("connected")
                    + " && document.querySelector('#sessions button[data-session=t1]') !== null")
            try await browser.find("#sessions button[data-session=t1]").click()
            try await browser.wait(
                "t1 followed by polling at version 0, its state unreadable without a journal, time travel off",
                until:
                    "document.getElementById('streamStatus').dataset.kind === 'polled' && "
                    + "document.getElementById('liveVersion').textContent === 'version 0' && "
                    + "document.getElementById('liveState').textContent.includes('memoryOnly') && "
                    + "document.getElementById('versionSlider').disabled"
            )
            let answer = try await offPool {
                try TestClient(port: port).request(
                    "POST", "/sessions/t1/actions?wait=true", headers: [("Authorization", "Bearer \(token)")],
                    body: #"{"type":"increase"}"#)
            }
            #expect(answer.status == 200)
            try await browser.wait(
                "the polled state to reach version 1",
                until: "document.getElementById('liveVersion').textContent === 'version 1' && " + Self.logRows(1))
            try await browser.screenshot("console-polled")
            // The console knows from /openapi.json that t1's stream needs t1's token: it does not try it.
            try await browser.expectNoConsoleErrors(expecting: [
                "/admin/sessions/t1/versions/0 - Failed to load resource: the server responded with a status of 409"
            ])
            let streams = try await offPool { try TestClient(port: port).request("GET", "/metrics").text }
            #expect(
                !streams.contains(#"reactor_http_requests_total{route="GET /events",status="200"}"#),
                "no /events stream in token mode")
        }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func consoleShowsAQuarantinedSessionWithItsCrashedActionAndReleasesIt() async throws {
        let data = FileManager.default.temporaryDirectory
            .appendingPathComponent("console-crash-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: data) }
        let servers = Servers(data: data)
        var port = try servers.start(port: 0)
        for body in [#"{"reactor":"counter","id":"c1"}"#, #"{"reactor":"counter","id":"c2"}"#] {
            #expect(try TestClient(port: port).request("POST", "/sessions", body: body).status == 201)
        }
        for _ in 0..<2 {
            let response = try TestClient(port: port).request(
                "POST", "/sessions/c1/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(response.status == 200)
        }
        servers.stop()
        // What the fatal-signal handler writes when c1's reduce traps on its third action.
        let at = UInt64(Date().timeIntervalSince1970 * 1e9)
        let action = Data(#"{"type":"increase"}"#.utf8).base64EncodedString()
        let record =
            #"{"session":"c1","reactor":"counter","phase":"reduce","seq":3,"version":3,"signal":"SIGILL","#
            + #""at":\#(at),"pid":1,"thread":1,"actionBytes":19,"action64":"\#(action)"}"#
        let file = data.appendingPathComponent("crashes/c1.\(at).1.crash").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data(record.utf8)))
        port = try servers.start(port: 0)

        try await Browser.run("console-quarantine") { browser in
            try await browser.open("http://127.0.0.1:\(port)/admin/console")
            try await browser.find("#token").type(TestServer.adminToken + WebElement.Key.enter)
            try await browser.wait(
                "the list to mark c1 unavailable",
                until: Self.connection("connected")
                    + " && document.querySelector('#sessions tr[data-session=c1] div.error') !== null")
            try await browser.find("#sessions button[data-session=c1]").click()
            try await browser.wait(
                "the quarantine with its crash and the crashed action in the log",
                until: "!document.getElementById('quarantine').hidden"
                    + " && document.getElementById('quarantineReason').textContent"
                    + ".includes('reduce making version 3 for action seq 3')"
                    + " && document.getElementById('crashFacts').textContent.includes('last good version: 2')"
                    + " && " + Self.logRows(3)
                    + " && document.querySelector('#actionLog tbody tr.crashed').textContent.includes('crashed')")
            #expect(try await browser.find("#sendAction").isEnabled() == false, "a quarantined session takes no action")
            try await browser.wait(
                "version 2 readable by time travel",
                until: "document.getElementById('versionState').textContent.includes('\"value\": 2')")
            let unnamed = try await browser.execute(Self.unnamedControls) as? [String]
            #expect(unnamed == [], "every control has a label or an accessible name")
            try await browser.screenshot("console-quarantined")

            try await browser.find("#release").click()
            try await browser.wait(
                "c1 released and live at version 2",
                until: "document.getElementById('quarantine').hidden && " + Self.live(version: 2)
                    + " && document.getElementById('actionResult').textContent.includes('Released')")
            try await Self.exampleButton(browser, "increase").click()
            try await browser.wait("its next action to give version 3", until: Self.live(version: 3))
            try await browser.screenshot("console-released")
            try await browser.expectNoConsoleErrors()
        }
        servers.stop()
    }

    /// How the browser logs a request to a server that has stopped (refused; reset, or its kept-alive socket
    /// no longer connected, when the stopping server closed it as the request went out).
    static let serverDown = [
        "net::ERR_CONNECTION_REFUSED", "net::ERR_CONNECTION_RESET", "net::ERR_SOCKET_NOT_CONNECTED",
    ]

    static func connection(_ kind: String) -> String {
        "document.getElementById('connection').dataset.kind === '\(kind)'"
    }

    static func live(version: Int) -> String {
        "document.getElementById('streamStatus').dataset.kind === 'live' && "
            + "document.getElementById('liveVersion').textContent === 'version \(version)'"
    }

    static func logRows(_ count: Int) -> String {
        "document.querySelectorAll('#actionLog tbody tr').length === \(count)"
    }

    /// Inputs, selects, text areas and buttons without a label, `aria-label(ledby)` or text.
    static let unnamedControls = """
        return Array.from(document.querySelectorAll('input, select, textarea, button'))
          .filter((e) => !((e.labels && e.labels.length) || e.getAttribute('aria-label')
            || e.getAttribute('aria-labelledby') || (e.tagName === 'BUTTON' && e.textContent.trim())))
          .map((e) => e.id || e.outerHTML.slice(0, 80));
        """

    static func exampleButton(_ browser: Browser, _ type: String) async throws -> WebElement {
        for button in try await browser.findAll("#exampleActions button") where try await button.text() == type {
            return button
        }
        throw TestFailure("no example action button \(type)")
    }
}
