import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// The page at `/` in a real Chromium: the session in the URL (reload and a second window reopen
/// it), the list kept in the browser, the picker following the open session, the spinner, an
/// upstream failure shown from the state, and status text that stays true when the session goes.
@Suite(.offThePool) struct WebPageTests {
    struct UpstreamDown: Error, CustomStringConvertible {
        var description: String { "upstream answered 503" }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func pageKeepsTheSessionInTheURLAndSaysWhatIsTrue() async throws {
        let server = try TestServer(search: { _, _ in throw UpstreamDown() })
        let port = server.port
        let base = "http://127.0.0.1:\(port)"
        let clock = server.clock
        try await Browser.run("page") { browser in
            try await browser.open(base + "/")
            try await browser.wait(
                "the picker to list the six reactors",
                until: "document.querySelectorAll('#reactor option').length === 6 && "
                    + "!document.getElementById('reactor').disabled")
            try await browser.wait(
                "the icon to load as an image",
                until:
                    "document.querySelector('header img').complete && "
                    + "document.querySelector('header img').naturalWidth > 0"
            )
            try await browser.find("#reactor option[value=counter]").click()
            try await browser.find("#create").click()
            try await browser.wait(
                "a new counter session in the URL, live at version 0",
                until: Self.live(version: 0) + " && new URL(location.href).searchParams.get('session')")
            let url = try await browser.currentURL()
            let id = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "session" }?.value)

            try await Self.button(browser, "increase").click()
            try await browser.wait(
                "the state to show value 1 beside the buttons",
                until: Self.live(version: 1) + " && " + Self.state(contains: #""value": 1"#))
            try await browser.screenshot("counter")

            try await browser.reload()
            try await browser.wait(
                "the reload to reopen the session from the URL",
                until: Self.live(version: 1) + " && " + Self.state(contains: #""value": 1"#))
            #expect(
                try await browser.execute("return document.getElementById('reactor').value") as? String == "counter")
            #expect(try await browser.text(of: "sessionList").contains(id))

            // A second window on the shared link shows the same session; what it sends reaches the first.
            let first = try await browser.window()
            let second = try await browser.newWindow()
            try await browser.switchTo(window: second)
            try await browser.open(url)
            try await browser.wait("the shared link to open the session", until: Self.live(version: 1))
            try await Self.button(browser, "increase").click()
            try await browser.wait("the second window to see version 2", until: Self.live(version: 2))
            try await browser.switchTo(window: first)
            try await browser.wait(
                "the first window to see version 2 live",
                until: Self.live(version: 2) + " && " + Self.state(contains: #""value": 2"#))

            // fruit: a button per fruit of the post, in its order; the spinner shows while isLoading, until the
            // reactor's clock passes 500 ms.
            try await browser.find("#reactor option[value=fruit]").click()
            try await browser.find("#create").click()
            try await browser.wait(
                "a fruit session, live", until: Self.live(version: 0) + " && " + Self.state(contains: #""fruitName""#))
            let fruitButtons = try await browser.execute(
                "return Array.from(document.querySelectorAll('#buttons button')).map((b) => b.textContent)")
            #expect(fruitButtons as? [String] == ["apple", "grapes", "banana", "cherries", "orange"])
            try await Self.button(browser, "cherries").click()
            try await browser.wait(
                "the spinner while the fruit loads",
                until: "!document.getElementById('spinner').classList.contains('hidden') && "
                    + Self.state(contains: #""isLoading": true"#))
            try await browser.screenshot("fruit-loading")
            try await waitFor("the fruit reactor to sleep on its clock", within: .seconds(20)) {
                await clock.reactorClock.waitForSleepers(1)
                await clock.advance(by: .milliseconds(500))
            }
            try await browser.wait(
                "the fruit's name, without the spinner",
                until: "document.getElementById('spinner').classList.contains('hidden') && "
                    + Self.state(contains: #""fruitName": "cherries""#))

            // profile: the create form offers its example params; the session runs for that user.
            try await browser.find("#reactor option[value=profile]").click()
            try await browser.wait(
                "the params field with the example",
                until:
                    "!document.getElementById('paramsField').hidden && "
                    + "document.getElementById('params').value === '{\"userID\":1}'"
            )
            #expect(
                try await browser.execute("document.getElementById('params').value = '{\"userID\":42}'; return true")
                    as? Bool == true)
            try await browser.find("#create").click()
            try await browser.wait(
                "a profile session of user 42, live",
                until: Self.live(version: 0) + " && " + Self.state(contains: #""userID": 42"#))
            try await Self.button(browser, "follow").click()
            try await waitFor("the user service to be asked on the clock", within: .seconds(20)) {
                await clock.reactorClock.waitForSleepers(1)
                await clock.advance(by: .milliseconds(300))
            }
            try await browser.wait(
                "the profile followed, without the spinner",
                until: "document.getElementById('spinner').classList.contains('hidden') && "
                    + Self.state(contains: #""isFollowing": true"#))
            try await browser.screenshot("profile-followed")
            #expect(
                try await browser.execute("document.getElementById('params').value = '{\"userID\":0}'; return true")
                    as? Bool == true)
            try await browser.find("#create").click()
            try await browser.wait(
                "the refusal naming the field",
                until: "document.getElementById('reactorInfo').textContent.includes('userID')")

            // The picker follows the open session, not the last choice.
            try await browser.find("#reactor option[value=todo]").click()
            try await browser.find("#sessionList a[href='?session=\(id)']").click()
            try await browser.wait(
                "the picker to follow the counter session",
                until: Self.live(version: 2) + " && document.getElementById('reactor').value === 'counter'")

            // search: the upstream failure lands in the state, and the page shows it.
            try await browser.find("#reactor option[value=search]").click()
            try await browser.find("#create").click()
            try await browser.wait(
                "a search session, live", until: Self.live(version: 0) + " && " + Self.state(contains: #""items""#))
            try await Self.button(browser, "updateQuery").click()
            try await browser.wait(
                "the upstream failure shown",
                until:
                    "!document.getElementById('stateError').classList.contains('hidden') && "
                    + "document.getElementById('stateError').textContent.includes('upstream answered 503')"
            )
            try await browser.screenshot("search-error")

            // Deleted elsewhere: the page says so and disables its buttons, instead of reconnecting forever.
            try await browser.find("#sessionList a[href='?session=\(id)']").click()
            try await browser.wait("the counter session, live", until: Self.live(version: 2))
            let deleted = try await offPool { try TestClient(port: port).request("DELETE", "/sessions/\(id)").status }
            #expect(deleted == 204)
            try await browser.wait(
                "the page to say the session was deleted and disable its buttons",
                until:
                    "document.getElementById('streamStatus').dataset.kind === 'ended' && "
                    + "document.getElementById('send').disabled && "
                    + "Array.from(document.querySelectorAll('#buttons button')).every((b) => b.disabled)")
            try await browser.screenshot("deleted")
            try await browser.reload()
            try await browser.wait(
                "the reloaded page to say the session does not exist",
                until:
                    "document.getElementById('streamStatus').dataset.kind === 'gone' && "
                    + "document.getElementById('streamStatus').textContent.includes('does not exist') && "
                    + "document.querySelector('#sessionList .gone') !== null && "
                    + "document.getElementById('send').disabled"
            )
            try await browser.screenshot("gone")
            // The only failed loads: the refused profile params, and asking for the deleted session.
            try await browser.expectNoConsoleErrors(expecting: [
                "/sessions - Failed to load resource: the server responded with a status of 422",
                "/sessions/\(id) - Failed to load resource: the server responded with a status of 404",
            ])
            #expect(
                try await browser.execute("return document.body.innerText.includes('Failed to fetch')") as? Bool
                    == false)
        }
    }

    /// True when the page follows its session live at `version`.
    static func live(version: Int) -> String {
        "document.getElementById('streamStatus').dataset.kind === 'live' && "
            + "document.getElementById('version').textContent === 'version \(version)'"
    }

    /// True when the live state's JSON contains `text`.
    static func state(contains text: String) -> String {
        "document.getElementById('state').textContent.includes(\(Self.javaScriptString(text)))"
    }

    static func javaScriptString(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text])
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    /// The page's action button for an action type.
    static func button(_ browser: Browser, _ type: String) async throws -> WebElement {
        for button in try await browser.findAll("#buttons button") where try await button.text() == type {
            return button
        }
        throw TestFailure("no action button \(type)")
    }
}
