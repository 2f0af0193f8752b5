import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The programs the browser tests drive (Debian's `chromium` and `chromium-driver`) and the
/// convention for external programs: when they are missing, a browser test is skipped with the
/// reason shown, unless the environment variable `CI` is set, where it fails with the install hint.
///
/// ```swift
/// @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
/// func pageWorks() async throws { try await Browser.run("page") { browser in … } }
/// ```
enum BrowserPrograms {
    static let installHint =
        "install them with apt-get install chromium chromium-driver (.ci/run does when they are missing)"
    static let chromium = find(["chromium", "chromium-browser"])
    static let chromedriver = find(["chromedriver"])

    /// Run browser tests when the programs are here, and in CI (where their absence is a failure).
    static var shouldRun: Bool { (chromium != nil && chromedriver != nil) || isCI }
    static var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }
    static var skipReason: Comment {
        Comment(
            rawValue:
                "chromium or chromedriver is not installed: \(installHint); skipped here, a failure when CI is set")
    }

    /// Both paths, or a failure carrying the install hint.
    static func require() throws -> (chromium: String, chromedriver: String) {
        guard let chromium, let chromedriver else {
            let missing = [chromium == nil ? "chromium" : nil, chromedriver == nil ? "chromedriver" : nil].compactMap {
                $0
            }
            throw TestFailure("\(missing.joined(separator: " and ")) not found on PATH: \(installHint)")
        }
        return (chromium, chromedriver)
    }

    static func find(_ names: [String]) -> String? {
        names.lazy.compactMap { try? TestProcess.tool($0) }.first
    }
}

/// A `chromedriver` process on a free port of 127.0.0.1 (it picks one with `--port=0` and says which).
final class ChromeDriver: Sendable {
    let process: TestProcess
    let port: Int

    private init(process: TestProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts chromedriver and waits (bounded) for the line naming its port. With `--port=0` it now and
    /// then says "IPv4 port not available" and exits (the port it picked was taken meanwhile): that start
    /// is tried again, a few times.
    static func start(path: String, within bound: Duration = .seconds(30)) async throws -> ChromeDriver {
        var attempt = 0
        while true {
            attempt += 1
            let process = try TestProcess(path, ["--port=0"])
            let line: String
            do {
                line = try await process.outputLines.next("chromedriver to say which port it listens on", within: bound)
                {
                    port(in: $0) != nil || $0.contains("port not available")
                }
            } catch {
                process.signal(SIGKILL)
                throw TestFailure("\(error); it printed: \(process.standardOutput)\(process.standardError)")
            }
            if let port = port(in: line) { return ChromeDriver(process: process, port: port) }
            process.signal(SIGKILL)
            if attempt >= 5 {
                throw TestFailure(
                    "chromedriver found no free port in \(attempt) starts; "
                        + "it printed: \(process.standardOutput)\(process.standardError)"
                )
            }
        }
    }

    /// The port from "ChromeDriver was started successfully on port 41234."
    static func port(in text: String) -> Int? {
        guard let range = text.range(of: "started successfully on port ") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        let rest = text[range.upperBound...].dropFirst(digits.count)
        return rest.isEmpty ? nil : Int(digits)
    }

    /// Ends chromedriver and waits, bounded, for it (end the WebDriver session first: that quits the browser).
    func stop() async {
        guard process.isRunning else { return }
        // SIGKILL: Foundation starts children with the signal mask of the spawning thread, where
        // SIGTERM is blocked, so chromedriver would never see a SIGTERM.
        _ = try? await process.stop(signal: SIGKILL)
    }
}
