import Foundation
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
    static let installHint = "install them with apt-get install chromium chromium-driver (.ci/run does when they are missing)"
    static let chromium = find(["chromium", "chromium-browser"])
    static let chromedriver = find(["chromedriver"])

    /// Run browser tests when the programs are here, and in CI (where their absence is a failure).
    static var shouldRun: Bool { (chromium != nil && chromedriver != nil) || isCI }
    static var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }
    static var skipReason: Comment {
        Comment(rawValue: "chromium or chromedriver is not installed: \(installHint); skipped here, a failure when CI is set")
    }

    /// Both paths, or an error carrying the install hint.
    static func require() throws -> (chromium: String, chromedriver: String) {
        guard let chromium, let chromedriver else {
            let missing = [chromium == nil ? "chromium" : nil, chromedriver == nil ? "chromedriver" : nil].compactMap { $0 }
            throw BrowserFailure("\(missing.joined(separator: " and ")) not found on PATH: \(installHint)")
        }
        return (chromium, chromedriver)
    }

    static func find(_ names: [String]) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in names {
            for directory in path.split(separator: ":") {
                let candidate = "\(directory)/\(name)"
                if access(candidate, X_OK) == 0 { return candidate }
            }
        }
        return nil
    }
}

/// What went wrong driving the browser, in words that name what did not happen.
struct BrowserFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A `chromedriver` process on a free port of 127.0.0.1 (it picks one with `--port=0` and says which).
final class ChromeDriver: @unchecked Sendable {
    let process = Process()
    let port: Int
    /// What chromedriver printed (it prints little without --verbose).
    let output = ServerProcess.Output()

    /// Starts chromedriver and waits (at most `timeoutSeconds`) for the line naming its port.
    init(path: String, timeoutSeconds: Double = 30) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--port=0"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let found = DispatchSemaphore(value: 0)
        let handle = pipe.fileHandleForReading
        let output = self.output
        // Reads until the end, so chromedriver never blocks on a full pipe.
        Thread.detachNewThread {
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                output.append(String(decoding: data, as: UTF8.self))
                let text = output.value
                if !signalled, Self.port(in: text) != nil {
                    signalled = true
                    found.signal()
                }
            }
            if !signalled { found.signal() }
        }
        let waited = found.wait(timeout: .now() + timeoutSeconds)
        let text = output.value
        guard waited == .success, let port = Self.port(in: text) else {
            process.terminate()
            throw BrowserFailure("chromedriver did not say which port it listens on within \(timeoutSeconds) s; it printed: \(text)")
        }
        self.port = port
    }

    /// The port from "ChromeDriver was started successfully on port 41234."
    static func port(in text: String) -> Int? {
        guard let range = text.range(of: "started successfully on port ") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        let rest = text[range.upperBound...].dropFirst(digits.count)
        return rest.isEmpty ? nil : Int(digits)
    }

    /// Ends chromedriver and waits for it (end the WebDriver session first: that quits the browser).
    func stop() {
        guard process.isRunning else { return }
        // SIGKILL: Foundation starts children with the signal mask of the spawning thread, where
        // SIGTERM is blocked, so chromedriver would never see a SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
