import Foundation
import HTTPServer
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion (bounded) and returns its exit status and standard output.
func run(_ executable: String, _ arguments: [String], input: Data? = nil, timeout: Duration = .seconds(30)) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    let stdin = Pipe()
    process.standardInput = stdin
    let finished = Recorder<Int32>()
    process.terminationHandler = { finished.record($0.terminationStatus) }
    try process.run()
    if let input { stdin.fileHandleForWriting.write(input) }
    try stdin.fileHandleForWriting.close()
    let output = Task.detached { stdout.fileHandleForReading.readDataToEndOfFile() }
    do {
        let status = try await finished.next(timeout: timeout)
        return (status, String(decoding: await output.value, as: UTF8.self))
    } catch {
        process.terminate()
        throw error
    }
}

/// The first of `paths` that exists and is executable.
func findExecutable(_ name: String) -> String? {
    ["/usr/bin/", "/usr/local/bin/", "/bin/"].map { $0 + name }.first { access($0, X_OK) == 0 }
}

/// Answers JSON POSTs with what it received, and streams three events on `/events`.
struct CurlApp: HTTPResponder {
    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        if request.path == "/events" {
            let stream = writer.startEventStream { _ in }
            for index in 1...3 { _ = stream.send(ServerSentEvent(event: "state", id: "\(index)", data: "{\"n\":\(index)}")) }
            stream.close(with: ServerSentEvent(event: "end", data: "bye"))
            return
        }
        let type = request.headers["content-type"] ?? "-"
        let body = "{\"method\":\"\(request.method.rawValue)\",\"type\":\"\(type)\",\"bytes\":\(request.body.count),\"chunked\":\(request.headers["transfer-encoding"] != nil)}"
        writer.respond(status: 201, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }
}

@Suite(.serialized) struct ExternalClientTests {
    @Test func curlPostsJSONUploadsChunkedAndFollowsAnEventStream() async throws {
        let curl = try #require(findExecutable("curl"), "curl is needed (.ci/run installs it)")
        try await withServer(CurlApp()) { _, address in
            let base = "http://127.0.0.1:\(address.port)"
            let post = try await run(curl, ["-sS", "-X", "POST", "-H", "Content-Type: application/json", "-d", "{\"type\":\"increase\"}", base + "/sessions/a/actions"])
            #expect(post.status == 0)
            #expect(post.output == "{\"method\":\"POST\",\"type\":\"application/json\",\"bytes\":19,\"chunked\":false}")

            let upload = Data(repeating: 0x7A, count: 200_000)
            let chunked = try await run(curl, ["-sS", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: application/octet-stream", "--data-binary", "@-", base + "/upload"], input: upload)
            #expect(chunked.status == 0)
            #expect(chunked.output == "{\"method\":\"POST\",\"type\":\"application/octet-stream\",\"bytes\":200000,\"chunked\":true}")

            let events = try await run(curl, ["-sS", "-N", base + "/events"])
            #expect(events.status == 0)
            #expect(events.output == "event: state\nid: 1\ndata: {\"n\":1}\n\nevent: state\nid: 2\ndata: {\"n\":2}\n\nevent: state\nid: 3\ndata: {\"n\":3}\n\nevent: end\ndata: bye\n\n")
        }
    }

    /// The `http-bench-server` built next to this test bundle.
    static var benchServer: String? {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: own).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("http-bench-server").path
            if access(candidate, X_OK) == 0 { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// The port in the server's `"listening"` log line (`"address":"127.0.0.1:PORT"`).
    /// Starts `executable`; `log` records its standard error as it grows (each value is everything
    /// so far, so a line split across reads is still found), `exit` its termination status.
    static func launch(_ executable: String, _ arguments: [String]) throws -> (process: Process, log: Recorder<String>, exit: Recorder<Int32>) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stderr = Pipe()
        process.standardError = stderr
        let exit = Recorder<Int32>()
        process.terminationHandler = { exit.record($0.terminationStatus) }
        try process.run()
        let log = Recorder<String>()
        // A thread of its own: a blocking read on the cooperative pool (two threads on this machine)
        // starved every other test once two servers were running.
        let reader = Thread {
            var seen = ""
            while true {
                let data = stderr.fileHandleForReading.availableData
                if data.isEmpty { return }
                seen += String(decoding: data, as: UTF8.self)
                log.record(seen)
            }
        }
        reader.start()
        return (process, log, exit)
    }

    static func listeningPort(in log: String) -> Int? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("\"listening\"") }),
            let range = line.range(of: "\"address\":\"127.0.0.1:")
        else { return nil }
        return Int(line[range.upperBound...].prefix(while: \.isNumber))
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func shutsDownGracefullyOnASignal(_ signal: Int32) async throws {
        let binary = try #require(Self.benchServer, "build it first: swift build --build-tests builds http-bench-server too")
        let (process, log, finished) = try Self.launch(binary, ["--port", "0", "--loops", "1"])
        defer { if process.isRunning { process.terminate() } }
        let listening = try await log.next { $0.contains("\"listening\"") }
        let port = try #require(Self.listeningPort(in: listening))

        let stream = try TestClient(SocketAddress(host: "127.0.0.1", port: port))
        try stream.send("POST /sessions HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\n\r\n{\"reactor\":\"counter\",\"id\":\"s\"}")
        #expect(try stream.readResponse().status == 201)
        try stream.send("GET /sessions/s/events HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try stream.read(until: "\n\n").contains("data: {\"value\":0}"))

        kill(process.processIdentifier, signal)
        #expect(try await finished.next(timeout: .seconds(20)) == 0)
        #expect(try stream.waitForClose())
    }
}
