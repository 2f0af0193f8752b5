import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One headless Chromium, driven over the W3C WebDriver HTTP API: navigate, find elements by CSS,
/// click, type, run scripts, wait for a condition (bounded, failing with what did not happen),
/// screenshots and the console log. ``run(_:_:)`` starts it, runs the test's body, fails the test on
/// any console error left unchecked, and closes it; one browser runs at a time.
///
/// Commands go over the tests' own HTTP/1.1 client (``TestClient``), not `URLSession`: the
/// toolchain's FoundationNetworking aborts on chromedriver's header lines, which have no space after
/// the colon (valid per RFC 9110; fixed in swift-corelibs-foundation #5527, after Swift 6.3.1).
///
/// ```swift
/// try await Browser.run("counter") { browser in
///     try await browser.open("http://127.0.0.1:\(port)/")
///     try await browser.find("#create").click()
///     try await browser.wait("the state to show version 0", until: "$('version').textContent === 'version 0'")
/// }
/// ```
final class Browser: @unchecked Sendable {
    let driver: ChromeDriver
    let session: String
    let profile: URL
    /// Where screenshots go (printed at start; kept after the test).
    let screenshots: URL
    var screenshotCount = 0

    /// Browsers are heavy on a 2-core machine: the tests take turns.
    static let turns = Turns()

    /// Starts a browser, runs `body` with it, checks the console log, and always closes the browser.
    static func run(_ name: String, _ body: (Browser) async throws -> Void) async throws {
        let programs = try BrowserPrograms.require()
        await turns.acquire()
        let browser: Browser
        do {
            browser = try await start(name: name, chromium: programs.chromium, chromedriver: programs.chromedriver)
        } catch {
            await turns.release()
            throw error
        }
        do {
            try await body(browser)
            try await browser.expectNoConsoleErrors()
        } catch {
            _ = try? await browser.screenshot("failure")
            await browser.close()
            await turns.release()
            throw error
        }
        await browser.close()
        await turns.release()
    }

    static func start(name: String, chromium: String, chromedriver: String) async throws -> Browser {
        let driver = try await ChromeDriver.start(path: chromedriver)
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("browser-profile-\(unique)")
        let screenshots = FileManager.default.temporaryDirectory.appendingPathComponent(
            "browser-screenshots-\(name)-\(unique)")
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        var arguments = [
            "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile.path)",
            "--window-size=1360,1400", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-component-update", "--disable-sync", "--lang=en-US",
            // Timers of a window in the background must run as in front: a test switches windows.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
        ]
        // Chromium's sandbox refuses to run as root (containers, CI).
        if getuid() == 0 { arguments.append("--no-sandbox") }
        let capabilities: [String: Any] = [
            "browserName": "chrome",
            "goog:chromeOptions": ["binary": chromium, "args": arguments],
            "goog:loggingPrefs": ["browser": "ALL"],
            "timeouts": ["script": 120_000, "pageLoad": 60_000, "implicit": 0],
        ]
        let answer: Any?
        do {
            answer = try await Self.send(
                "POST", port: driver.port, path: "/session", body: ["capabilities": ["alwaysMatch": capabilities]])
        } catch {
            await driver.stop()
            throw TestFailure("chromium did not start through chromedriver: \(error)")
        }
        guard let session = (answer as? [String: Any])?["sessionId"] as? String else {
            await driver.stop()
            throw TestFailure("chromedriver answered a new session without an id: \(String(describing: answer))")
        }
        print("browser test \(name): screenshots in \(screenshots.path)")
        return Browser(driver: driver, session: session, profile: profile, screenshots: screenshots)
    }

    init(driver: ChromeDriver, session: String, profile: URL, screenshots: URL) {
        self.driver = driver
        self.session = session
        self.profile = profile
        self.screenshots = screenshots
    }

    /// Ends the session (the browser quits), chromedriver, and removes the profile.
    func close() async {
        _ = try? await command("DELETE", "")
        await driver.stop()
        try? FileManager.default.removeItem(at: profile)
    }

    // MARK: Commands

    /// One WebDriver command on this session (`path` after `/session/{id}`); its `value`, or the error it answered.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        try await Self.send(
            method, port: driver.port, path: "/session/\(session)\(path)", body: body ?? (method == "POST" ? [:] : nil))
    }

    static func send(_ method: String, port: Int, path: String, body: [String: Any]?) async throws -> Any? {
        let text = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let response = try await offPool {
            // chromedriver refuses a Host other than its own address (DNS rebinding), so the head is written here.
            let connection = try TestClient(port: port, readTimeout: .seconds(150))
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            if let text { head += "Content-Type: application/json\r\nContent-Length: \(text.utf8.count)\r\n" }
            try connection.send(head + "\r\n" + (text ?? ""))
            return try connection.readResponse(method: method)
        }
        let data = Data(response.body)
        let status = response.status
        let value = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["value"]
        guard status == 200 else {
            let error = value as? [String: Any]
            let name = error?["error"] as? String ?? "HTTP \(status)"
            let message =
                (error?["message"] as? String ?? String(decoding: data, as: UTF8.self)).split(separator: "\n").first
                .map(String.init) ?? ""
            throw TestFailure(
                "WebDriver \(method) \(path.split(separator: "/").dropFirst(2).joined(separator: "/")): "
                    + "\(name): \(message)"
            )
        }
        return value is NSNull ? nil : value
    }

    /// Loads `url` and returns once the page has loaded (its scripts ran).
    func open(_ url: String) async throws { try await command("POST", "/url", ["url": url]) }

    /// Reloads the page, as the reload button does.
    func reload() async throws { try await command("POST", "/refresh") }

    /// The address in the location bar.
    func currentURL() async throws -> String { try await command("GET", "/url") as? String ?? "" }

    /// The first element matching the CSS selector; an error naming the selector when there is none.
    func find(_ selector: String) async throws -> WebElement {
        let answer = try await command("POST", "/element", ["using": "css selector", "value": selector])
        guard let id = (answer as? [String: Any])?[WebElement.key] as? String else {
            throw TestFailure("no element matches \(selector)")
        }
        return WebElement(browser: self, id: id, selector: selector)
    }

    /// Every element matching the CSS selector, in document order.
    func findAll(_ selector: String) async throws -> [WebElement] {
        let answer =
            try await command("POST", "/elements", ["using": "css selector", "value": selector]) as? [[String: Any]]
            ?? []
        return answer.compactMap {
            ($0[WebElement.key] as? String).map { WebElement(browser: self, id: $0, selector: selector) }
        }
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns what it returns.
    @discardableResult
    func execute(_ script: String, _ args: [Any] = []) async throws -> Any? {
        try await command("POST", "/execute/sync", ["script": script, "args": args])
    }

    /// Runs `script` whose last argument is a callback; returns what it passes to the callback.
    func executeAsync(_ script: String, _ args: [Any] = []) async throws -> Any? {
        try await command("POST", "/execute/async", ["script": script, "args": args])
    }

    /// Opens a new window (not a tab, so it is never in the background) and returns its handle.
    func newWindow() async throws -> String {
        let answer = try await command("POST", "/window/new", ["type": "window"])
        guard let handle = (answer as? [String: Any])?["handle"] as? String else {
            throw TestFailure("no handle for a new window: \(String(describing: answer))")
        }
        return handle
    }

    /// The current window's handle.
    func window() async throws -> String { try await command("GET", "/window") as? String ?? "" }

    /// Makes `handle` the window commands go to.
    func switchTo(window handle: String) async throws { try await command("POST", "/window", ["handle": handle]) }
}

/// Lets one holder at a time through, in arrival order.
actor Turns {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
