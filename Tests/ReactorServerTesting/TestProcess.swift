import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program a test starts: its standard output and error recorded line by line as they arrive,
/// signals sent by the test (SIGTERM, SIGKILL, SIGSTOP…), and every wait bounded. Released while still
/// running, it is killed. ``ServerProcess`` builds on it for servers.
///
/// ```swift
/// let curl = try TestProcess(TestProcess.tool("curl"), ["-sN", "http://127.0.0.1:\(port)/sessions/c/events"])
/// try await curl.outputLines.next("the first event") { $0.hasPrefix("data:") }
/// curl.signal(SIGTERM)
/// #expect(try await curl.waitForExit() == .signalled(SIGTERM))
/// let result = try await TestProcess.run("/bin/echo", ["hi"])   // to completion, bounded
/// ```
public final class TestProcess: @unchecked Sendable {
    /// How a process ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// `exit 0`, `signal 9`.
        public var description: String {
            switch self {
            case .exited(let status): "exit \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// The running process (pid, arguments).
    public let process = Process()
    /// Each complete line of standard output, as it arrives.
    public let outputLines = Recorder<String>()
    /// Each complete line of standard error, as it arrives.
    public let errorLines = Recorder<String>()
    private let output = Bytes()
    private let error = Bytes()
    private let ended = Recorder<Termination>()
    private let pipesClosed = Recorder<Void>()
    private let name: String

    /// Starts `executable` with `arguments`, in `directory` if given. `environment` replaces this
    /// process's environment when given; `input` is written to its standard input, which is then closed.
    public init(_ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, directory: String? = nil, input: [UInt8]? = nil) throws {
        name = URL(fileURLWithPath: executable).lastPathComponent
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        process.terminationHandler = { [ended] process in
            ended.record(process.terminationReason == .uncaughtSignal ? .signalled(process.terminationStatus) : .exited(process.terminationStatus))
        }
        do {
            try process.run()
        } catch {
            throw TestFailure("cannot start \(executable): \(error)")
        }
        Self.collect(stdout.fileHandleForReading, into: output, lines: outputLines, closed: pipesClosed)
        Self.collect(stderr.fileHandleForReading, into: error, lines: errorLines, closed: pipesClosed)
        if let input { stdin.fileHandleForWriting.write(Data(input)) }
        try? stdin.fileHandleForWriting.close()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Reads `handle` to its end on a thread of its own, keeping every byte and recording each line.
    private static func collect(_ handle: FileHandle, into bytes: Bytes, lines: Recorder<String>, closed: Recorder<Void>) {
        Thread.detachNewThread {
            var partial: [UInt8] = []
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                bytes.append(data)
                partial.append(contentsOf: data)
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.record(String(decoding: partial[..<newline], as: UTF8.self))
                    partial.removeSubrange(...newline)
                }
            }
            if !partial.isEmpty { lines.record(String(decoding: partial, as: UTF8.self)) }
            closed.record(())
        }
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// Whether it has not ended yet.
    public var isRunning: Bool { process.isRunning }

    /// Everything written to standard output so far.
    public var standardOutput: String { output.text }

    /// Everything written to standard error so far.
    public var standardError: String { error.text }

    /// Sends `signal` (SIGTERM, SIGINT, SIGKILL, SIGSTOP, SIGCONT…).
    public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits until the process has ended and both its output pipes are read to their end; fails after
    /// `bound` (the process is then killed, so the test run goes on).
    @discardableResult
    public func waitForExit(within bound: Duration = defaultBound) async throws -> Termination {
        do {
            try await ended.waitForCount(1, "\(name) (pid \(pid)) to exit", within: bound)
            // Its children may hold the pipes a little longer; what it wrote itself is in by now.
            try await pipesClosed.waitForCount(2, "\(name)'s output to end", within: bound)
            return ended.values[0]
        } catch {
            signal(SIGKILL)
            throw error
        }
    }

    /// Sends `signal` and waits, bounded, for the process to end.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, within bound: Duration = defaultBound) async throws -> Termination {
        self.signal(signal)
        return try await waitForExit(within: bound)
    }

    // MARK: finding programs

    /// An executable this package builds (`reactor-server`, `http-bench-server`), from the folder of the
    /// test bundle (`swift build --build-tests` builds them next to it).
    public static func builtExecutable(_ name: String = "reactor-server") throws -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: own).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if access(candidate, X_OK) == 0 { return candidate }
            directory.deleteLastPathComponent()
        }
        throw TestFailure("no \(name) built next to the tests; run: swift build --build-tests")
    }

    /// A program installed on this machine (`curl`, `bash`), from the usual folders.
    public static func tool(_ name: String) throws -> String {
        let folders = ["/usr/local/bin/", "/usr/bin/", "/bin/"] + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/" }
        guard let path = folders.map({ $0 + name }).first(where: { access($0, X_OK) == 0 }) else {
            throw TestFailure("\(name) is needed and not installed (.ci/run installs what the tests drive)")
        }
        return path
    }

    // MARK: running to completion

    /// What a program run to completion left.
    public struct Result: Sendable {
        /// How it ended.
        public var termination: Termination
        /// Its standard output.
        public var output: String
        /// Its standard error.
        public var error: String
    }

    /// Runs `executable` to completion, failing after `bound` (and killing it).
    public static func run(_ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, input: [UInt8]? = nil, within bound: Duration = defaultBound) async throws -> Result {
        let process = try TestProcess(executable, arguments, environment: environment, input: input)
        let termination = try await process.waitForExit(within: bound)
        return Result(termination: termination, output: process.standardOutput, error: process.standardError)
    }
}

/// What a process wrote to one of its pipes, growing as it arrives.
private final class Bytes: Sendable {
    private let bytes = Mutex<[UInt8]>([])

    func append(_ data: Data) { bytes.withLock { $0.append(contentsOf: data) } }
    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}
