import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// The admin console in a real Chromium shows a session's pending timers and cancels one with its button; the
/// timer that fires shows in the action log marked with its name.
@Suite(.offThePool) struct AdminConsoleTimerTests {
    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func consoleListsAndCancelsTimers() async throws {
        try await withTemporaryDirectory("console-timers") { directory in try await Self.run(directory) }
    }

    static func run(_ directory: String) async throws {
        // With a journal: the console's time travel reads past versions (memory-only answers 409 to that).
        let server = try TestServer(dataDirectory: directory)
        let port = server.port
        let base = "http://127.0.0.1:\(port)"
        @Sendable func post(_ path: String, _ body: String) async throws -> TestResponse {
            try await offPool {
                try TestClient(port: port, readTimeout: .seconds(60)).request("POST", path, body: body)
            }
        }
        #expect(try await post("/sessions", #"{"reactor":"reminders","id":"r1"}"#).status == 201)
        #expect(
            try await post("/sessions/r1/actions?wait=true", #"{"type":"remind","text":"tea","afterSeconds":60}"#)
                .status == 200)
        #expect(
            try await post(
                "/sessions/r1/actions?wait=true", #"{"type":"remind","text":"post office","afterSeconds":600}"#
            ).status == 200)

        try await Browser.run("console-timers") { browser in
            try await browser.open(base + "/admin/console")
            try await browser.find("#token").type(TestServer.adminToken + WebElement.Key.enter)
            try await browser.wait(
                "the console to list r1",
                until: AdminConsoleTests.connection("connected")
                    + " && document.querySelector('#sessions button[data-session=r1]') !== null")
            try await browser.find("#sessions button[data-session=r1]").click()
            try await browser.wait("both timers, soonest first", until: timerNames(["tea", "post office"]))
            try await browser.screenshot("console-timers")
            try await browser.find("#timers button[aria-label='Cancel timer post office']").click()
            try await browser.wait(
                "the cancelled timer gone, said so",
                until: timerNames(["tea"])
                    + " && document.getElementById('timersNote').textContent.includes('Cancelled timer post office')")
            let left = try await offPool {
                try TestClient(port: port).request("GET", "/admin/sessions/r1/timers", headers: server.admin).text
            }
            #expect(left.contains(#""name":"tea""#) && !left.contains("post office"))

            await server.clock.advance(by: .seconds(60))
            try await browser.wait(
                "the fired timer's action in the log, no timer left",
                until: timerNames([])
                    + " && document.querySelector('#actionLog tbody tr:last-child').textContent.includes('timer tea')"
                    + " && document.getElementById('timersNote').textContent === 'No pending timers.'")
            let unnamed = try await browser.execute(AdminConsoleTests.unnamedControls) as? [String]
            #expect(unnamed == [], "every control has a label or an accessible name")
            try await browser.expectNoConsoleErrors(expecting: [])
        }
    }

    /// The timers table lists exactly these names, in order.
    static func timerNames(_ names: [String]) -> String {
        let list = names.map { "'\($0)'" }.joined(separator: ",")
        return "JSON.stringify(Array.from(document.querySelectorAll('#timers tbody tr td:first-child'))"
            + ".map((cell) => cell.textContent)) === JSON.stringify([\(list)])"
    }
}
