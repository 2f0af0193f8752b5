import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A `reactor-server` process started from a built binary, for tests of the executable itself.
/// It listens on a free port (`--port 0`); the port is read from its "listening" log line.
final class ServerProcess {
    let process = Process()
    let port: Int
    private let errorOutput: Output
    /// Signalled when standard error reaches its end (the process exited).
    private let errorEnded = DispatchSemaphore(value: 0)

    /// Collected standard error, readable while the process runs.
    final class Output: Sendable {
        private let text = Mutex("")

        func append(_ chunk: String) { text.withLock { $0 += chunk } }
        var value: String { text.withLock { $0 } }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The binary built next to this test bundle (`swift build --build-tests` builds it).
    static func binary(named name: String = "reactor-server") throws -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: own).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if access(candidate, X_OK) == 0 { return candidate }
            directory.deleteLastPathComponent()
        }
        throw Failure(description: "no \(name) binary next to the tests; run: swift build --build-tests")
    }

    /// Starts `binary` with `arguments` (plus `--port 0` unless `port` is given) and waits for its
    /// "listening" line.
    init(binary: String? = nil, arguments: [String] = [], environment: [String: String] = [:], directory: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: try binary ?? Self.binary())
        process.arguments = arguments.contains("--port") ? arguments : arguments + ["--port", "0"]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("REACTOR_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let output = Output()
        errorOutput = output
        try process.run()
        // Read standard error until the server says where it listens (or exits).
        let handle = pipe.fileHandleForReading
        var port: Int?
        while port == nil {
            let data = handle.availableData
            if data.isEmpty { break }
            output.append(String(decoding: data, as: UTF8.self))
            port = Self.listeningPort(in: output.value)
        }
        guard let port else {
            process.waitUntilExit()
            throw Failure(description: "reactor-server did not start (exit \(process.terminationStatus)): \(output.value)")
        }
        self.port = port
        let ended = errorEnded
        Thread.detachNewThread {
            while true {
                let data = handle.availableData
                if data.isEmpty {
                    ended.signal()
                    return
                }
                output.append(String(decoding: data, as: UTF8.self))
            }
        }
    }

    /// The port in `"msg":"listening","address":"127.0.0.1:PORT"` of the service's log line.
    static func listeningPort(in log: String) -> Int? {
        for line in log.split(separator: "\n") where line.contains(#""label":"reactor-server","msg":"listening""#) {
            guard let range = line.range(of: #""address":""#) else { continue }
            let address = line[range.upperBound...].prefix { $0 != "\"" }
            return address.split(separator: ":").last.flatMap { Int($0) }
        }
        return nil
    }

    var standardError: String { errorOutput.value }

    /// Sends `signal` and waits for the exit status.
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        errorEnded.wait()  // everything it wrote is in `standardError`
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Runs a command to completion and returns its exit status and standard output.
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes fully before waiting, so a chatty child never blocks on a full pipe.
    let errorData = Mutex(Data())
    let readerDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errorData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() }
        readerDone.signal()
    }
    let outputData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    readerDone.wait()
    return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), errorData.withLock { String(decoding: $0, as: UTF8.self) })
}
