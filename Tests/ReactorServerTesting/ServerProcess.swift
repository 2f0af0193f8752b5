import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server this package builds (`reactor-server` unless told otherwise) started as a child process on a
/// free port: `--port 0` is added, and the port is read from its `"listening"` log line. Stop it with a
/// signal of the test's choosing; released while running, it is killed.
///
/// ```swift
/// try await withTemporaryDirectory("restart") { directory in
///     let server = try await ServerProcess.start(arguments: ["--data-dir", directory])
///     let created = try server.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"c"}"#)
///     #expect(created.status == 201)
///     #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))
/// }
/// ```
public final class ServerProcess: Sendable {
    /// The process, for its output, pid and signals.
    public let process: TestProcess
    /// The port it listens on.
    public let port: Int

    private init(process: TestProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts the built `executable` with `arguments` and waits, bounded, for its `"listening"` line.
    /// `environment` is added to this process's (whose `REACTOR_*` variables are left out); `shell` is a
    /// command run first in the same shell (`"ulimit -S -f 64"`), which then `exec`s the server. `label` is
    /// the logger label of its `"listening"` line: the executable's name, or `reactor-server` for a program
    /// hosting its reactors through `ReactorServerCommand`.
    public static func start(
        _ executable: String = "reactor-server", arguments: [String] = [], environment: [String: String] = [:],
        directory: String? = nil, shell: String? = nil, label: String? = nil, within bound: Duration = .seconds(60)
    ) async throws -> ServerProcess {
        let binary = executable.hasPrefix("/") ? executable : try TestProcess.builtExecutable(executable)
        let serverArguments = arguments.contains("--port") ? arguments : arguments + ["--port", "0"]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        env.merge(environment) { _, new in new }
        let process: TestProcess
        if let shell {
            process = try TestProcess(
                "/bin/sh", ["-c", "\(shell) && exec \"$0\" \"$@\"", binary] + serverArguments, environment: env,
                directory: directory)
        } else {
            process = try TestProcess(binary, serverArguments, environment: env, directory: directory)
        }
        let name = URL(fileURLWithPath: binary).lastPathComponent
        let label = label ?? name
        do {
            // The program's own line (label = its name), logged once it is ready, not its HTTP layer's.
            let line = try await process.errorLines.next("\(name) to log that it listens", within: bound) {
                listeningPort(in: $0, label: label) != nil
            }
            return ServerProcess(process: process, port: listeningPort(in: line, label: label)!)
        } catch {
            process.signal(SIGKILL)
            let exit = try? await process.waitForExit(within: .seconds(5))
            throw TestFailure(
                "\(name) did not start (\(exit.map(\.description) ?? "still running")): \(error); "
                    + "its standard error: \(process.standardError)"
            )
        }
    }

    /// The port of a `"label":"<label>","msg":"listening"` log line's `"address":"HOST:PORT"`, nil for other lines.
    public static func listeningPort(in line: String, label: String) -> Int? {
        guard line.contains(#""label":"\#(label)","msg":"listening""#), let range = line.range(of: #""address":""#)
        else { return nil }
        let address = line[range.upperBound...].prefix { $0 != "\"" }
        return address.split(separator: ":").last.flatMap { Int($0) }
    }

    /// A new connection to it.
    public func client(readTimeout: Duration = defaultBound, receiveBuffer: Int32? = nil) throws -> TestClient {
        try TestClient(port: port, readTimeout: readTimeout, receiveBuffer: receiveBuffer)
    }

    /// Everything it wrote to standard error so far (its JSON log lines).
    public var standardError: String { process.standardError }

    /// Sends `signal` and waits, bounded, for it to end.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, within bound: Duration = defaultBound) async throws
        -> TestProcess.Termination
    {
        try await process.stop(signal: signal, within: bound)
    }
}
