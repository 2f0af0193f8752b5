import Foundation
import ReactorServerTesting
import Synchronization
import Testing

/// Waiting for the page, reading its console log, and screenshots.
extension Browser {
    /// One line of the browser's console log (`console.error`, uncaught exceptions, failed loads …).
    struct ConsoleEntry: CustomStringConvertible {
        var level: String
        var source: String
        var message: String
        var description: String { "[\(level) \(source)] \(message)" }
    }

    /// Waits until the JavaScript expression `predicate` is true in the page, checking on every DOM
    /// change (and every 100 ms, for what no mutation shows); fails after `timeout` with `what` and
    /// the page's status lines, so the message says what did not happen.
    func wait(
        _ what: String, timeout: Duration = .seconds(20), until predicate: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let milliseconds = Int(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let script = """
            const done = arguments[arguments.length - 1];
            const check = () => { try { return Boolean(\(predicate)); } catch (_) { return false; } };
            if (check()) return done({ ok: true });
            let finished = false, observer = null, timer = null, limit = null;
            const finish = (ok) => {
              if (finished) return;
              finished = true;
              observer.disconnect(); clearInterval(timer); clearTimeout(limit);
              const statuses = Array.from(document.querySelectorAll('[role=status], [role=alert], .error'))
                .map((e) => (e.id || e.className) + ': ' + e.textContent.trim())
                .filter((t) => !t.endsWith(': '));
              done({ ok, statuses, url: location.href });
            };
            observer = new MutationObserver(() => { if (check()) finish(true); });
            observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
            timer = setInterval(() => { if (check()) finish(true); }, 100);
            limit = setTimeout(() => finish(false), \(milliseconds));
            """
        let answer = try await executeAsync(script) as? [String: Any]
        guard answer?["ok"] as? Bool != true else { return }
        let statuses = (answer?["statuses"] as? [String] ?? []).joined(separator: " | ")
        let shot = try? await screenshot("timeout")
        throw TestFailure(
            """
            timed out after \(timeout) waiting for \(what) (\(predicate)) at \(answer?["url"] as? String ?? "?"); \
            the page's status lines: \(statuses.isEmpty ? "none" : statuses)\
            \(shot.map { "; screenshot \($0.path)" } ?? "")
            """)
    }

    /// The console entries logged since the last call (chromedriver hands each out once).
    func takeConsoleLog() async throws -> [ConsoleEntry] {
        let entries = try await command("POST", "/se/log", ["type": "browser"]) as? [[String: Any]] ?? []
        return entries.map {
            ConsoleEntry(
                level: $0["level"] as? String ?? "", source: $0["source"] as? String ?? "",
                message: $0["message"] as? String ?? "")
        }
    }

    /// Records an issue for every console error since the last check, except failed loads whose text
    /// contains one of `expected` (a 404 the test caused, the server being down on purpose).
    func expectNoConsoleErrors(expecting expected: [String] = [], sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        for entry in try await takeConsoleLog() where entry.level == "SEVERE" {
            let allowed = entry.source == "network" && expected.contains { entry.message.contains($0) }
            if !allowed { Issue.record("console error in the browser: \(entry)", sourceLocation: sourceLocation) }
        }
    }

    /// Saves a PNG of the window as `NN-name.png` in ``screenshots`` and prints its path.
    @discardableResult
    func screenshot(_ name: String) async throws -> URL {
        guard let encoded = try await command("GET", "/screenshot") as? String, let png = Data(base64Encoded: encoded)
        else {
            throw TestFailure("the screenshot of \(name) was not base64 PNG")
        }
        screenshotCount += 1
        let file = screenshots.appendingPathComponent(String(format: "%02d-%@.png", screenshotCount, name))
        try png.write(to: file)
        print("screenshot: \(file.path)")
        return file
    }

    /// The text of the element with this id (empty when there is none).
    func text(of id: String) async throws -> String {
        try await execute("const e = document.getElementById(arguments[0]); return e ? e.textContent : '';", [id])
            as? String ?? ""
    }
}
