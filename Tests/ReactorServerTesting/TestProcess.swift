import CLinux
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

    /// Each complete line of standard output, as it arrives.
    public let outputLines = Recorder<String>()
    /// Each complete line of standard error, as it arrives.
    public let errorLines = Recorder<String>()
    private let output = Bytes()
    private let error = Bytes()
    private let ended = Recorder<Termination>()
    private let pipesClosed = Recorder<Void>()
    private let name: String
    /// The process id.
    public let pid: Int32

    /// Starts `executable` with `arguments`, in `directory` if given. `environment` replaces this
    /// process's environment when given; `input` is written to its standard input, which is then closed.
    ///
    /// Spawned with `posix_spawn` rather than Foundation's `Process`, whose `run()` crashed in `memcpy`
    /// when several tests started programs at once and whose pipe reads end the test run on `EINTR`.
    /// The child starts with no signal blocked and default handlers, whatever the test process has,
    /// and is killed when the test process dies, however it dies (``SpawnThread``).
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, input: [UInt8]? = nil
    ) throws {
        name = URL(fileURLWithPath: executable).lastPathComponent
        // Checked here: through setpriv, posix_spawn itself would succeed and setpriv fail later.
        guard access(executable, X_OK) == 0 else {
            throw TestFailure("cannot start \(executable): \(String(cString: strerror(errno)))")
        }
        var stdin: [Int32] = [-1, -1]
        var stdout: [Int32] = [-1, -1]
        var stderr: [Int32] = [-1, -1]
        guard CLinux_pipe_cloexec(&stdin) == 0, CLinux_pipe_cloexec(&stdout) == 0, CLinux_pipe_cloexec(&stderr) == 0
        else {
            throw TestFailure("cannot make pipes for \(executable): \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdout[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderr[1], 2)
        // Nothing else of this process's: other tests' sockets would count against the child's limits.
        CLinux_spawn_file_actions_addclosefrom(&actions, 3)
        if let directory { CLinux_spawn_file_actions_addchdir(&actions, directory) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // Dies with this process (see SpawnThread): setpriv runs `executable` in its place, same pid.
        let command = SpawnThread.dyingWithParent([executable] + arguments)
        let argv = command.map { strdup($0) } + [nil]
        let environmentPairs = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = environmentPairs.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let (status, child) = SpawnThread.shared.run { () -> (Int32, pid_t) in
            var child: pid_t = 0
            let status = posix_spawn(&child, command[0], &actions, &attributes, argv, envp)
            return (status, child)
        }
        for fd in [stdin[0], stdout[1], stderr[1]] { close(fd) }
        guard status == 0 else {
            for fd in [stdin[1], stdout[0], stderr[0]] { close(fd) }
            throw TestFailure("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        pid = child
        Self.collect(stdout[0], into: output, lines: outputLines, closed: pipesClosed)
        Self.collect(stderr[0], into: error, lines: errorLines, closed: pipesClosed)
        Self.reap(child, into: ended)
        if let input { Self.writeAll(input, to: stdin[1]) }
        close(stdin[1])
    }

    deinit {
        if isRunning { kill(pid, SIGKILL) }
    }

    /// Reads `fd` to its end on a thread of its own, keeping every byte and recording each line.
    private static func collect(_ fd: Int32, into bytes: Bytes, lines: Recorder<String>, closed: Recorder<Void>) {
        Thread.detachNewThread {
            var partial: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                let chunk = buffer[..<count]
                bytes.append(chunk)
                partial.append(contentsOf: chunk)
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.record(String(decoding: partial[..<newline], as: UTF8.self))
                    partial.removeSubrange(...newline)
                }
            }
            close(fd)
            if !partial.isEmpty { lines.record(String(decoding: partial, as: UTF8.self)) }
            closed.record(())
        }
    }

    /// Waits for the child on a thread of its own and records how it ended.
    private static func reap(_ pid: pid_t, into ended: Recorder<Termination>) {
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Glibc does not bring to Swift.
            let signal = status & 0x7F
            ended.record(signal != 0 && signal != 0x7F ? .signalled(signal) : .exited((status >> 8) & 0xFF))
        }
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR; stops if the reader went away.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Whether it has not ended yet.
    public var isRunning: Bool { ended.values.isEmpty }

    /// Everything written to standard output so far.
    public var standardOutput: String { output.text }

    /// Everything written to standard error so far.
    public var standardError: String { error.text }

    /// Sends `signal` (SIGTERM, SIGINT, SIGKILL, SIGSTOP, SIGCONT…).
    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Stops the process (SIGSTOP) and returns once every one of its threads has stopped. `kill(2)`
    /// returns before that: the kernel wakes one thread to begin the group stop, and the others run
    /// on (reading sockets, answering) until it reaches them, which on a busy machine takes
    /// milliseconds. A test that sends work "to a paused process" right after `kill` races it.
    public func pause(within bound: Duration = defaultBound) async throws {
        signal(SIGSTOP)
        try await eventually("every thread of \(name) (pid \(pid)) to stop after SIGSTOP", within: bound) {
            guard isRunning else { throw TestFailure("\(name) (pid \(pid)) ended instead of stopping") }
            return Self.allThreadsStopped(pid)
        }
    }

    /// Whether every thread of `pid` is stopped (`T` in `/proc/PID/task/TID/stat`).
    static func allThreadsStopped(_ pid: pid_t) -> Bool {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !tasks.isEmpty
        else { return false }
        return tasks.allSatisfy { task in
            // The state follows the command name, which is in parentheses and may hold spaces.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            return stat[close...].dropFirst().trimmingCharacters(in: .whitespaces).first == "T"
        }
    }

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
        let own =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
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
        let folders =
            ["/usr/local/bin/", "/usr/bin/", "/bin/"]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/" }
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
    public static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, input: [UInt8]? = nil,
        within bound: Duration = defaultBound
    ) async throws -> Result {
        let process = try TestProcess(executable, arguments, environment: environment, input: input)
        let termination = try await process.waitForExit(within: bound)
        return Result(termination: termination, output: process.standardOutput, error: process.standardError)
    }
}

/// What a process wrote to one of its pipes, growing as it arrives.
private final class Bytes: Sendable {
    private let bytes = Mutex<[UInt8]>([])

    func append(_ data: ArraySlice<UInt8>) { bytes.withLock { $0.append(contentsOf: data) } }
    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}
