import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real `haproxy` in the foreground (`-db`) in front of instances on loopback, configured from the
/// shipped `Config/cluster/haproxy.cfg` with only its frontend port, server lines and runtime-API
/// socket changed (``configuration(from:port:servers:socket:)``), so the tests drive the file users
/// run. Servers come and go through the runtime API, without a reload.
///
/// ```swift
/// let proxy = try await HAProxyProcess.start(servers: [("i1", 8081), ("i2", 8082)])
/// let answer = try proxy.client().request("GET", "/sessions/c")      // X-Served-By: i1 or i2
/// try await proxy.waitForServer("i1", "DOWN")                        // its health check failed
/// try await proxy.addServer("i3", port: 8083)                        // checked, enabled, UP
/// await proxy.shutdown()
/// ```
///
/// Without the binary, tests skip (`.enabled(if: HAProxyProcess.canRun, …)`) unless `CI` is set.
public final class HAProxyProcess: Sendable {
    /// Where Debian's package installs it.
    public static let binary = ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    /// Whether tests that need it run: installed, or `CI` set (then a missing binary fails them).
    public static let canRun = binary != nil || ProcessInfo.processInfo.environment["CI"] != nil
    public static let missing = "haproxy is not installed (apt-get install haproxy)"
    /// The shipped configuration this fixture starts from.
    public static let shippedConfiguration = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config/cluster/haproxy.cfg").path
    /// The backend of the shipped configuration.
    public static let backend = "instances"

    /// The frontend's port on 127.0.0.1.
    public let port: Int
    /// Its folder: the configuration and the runtime API's socket.
    public let directory: String
    private let process: TestProcess

    /// The runtime API's Unix socket.
    public var socket: String { directory + "/haproxy.sock" }
    /// Everything it wrote (state changes of servers, alerts).
    public var log: String { process.standardError + process.standardOutput }
    public var pid: Int32 { process.pid }

    private init(port: Int, directory: String, process: TestProcess) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    /// `template` (the shipped file's text) with the frontend on 127.0.0.1:`port`, one `server` line
    /// per entry of `servers` in place of the template's, and the runtime API on `socket`. Fails when
    /// the template lacks one of those lines, so a change to the shipped file that this would miss
    /// shows up here instead of as a proxy configured differently from what users run.
    public static func configuration(
        from template: String, port: Int, servers: [(name: String, port: Int)], socket: String
    ) throws -> String {
        var lines: [String] = []
        var found = (bind: false, socket: false, servers: false)
        for line in template.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            let indent = String(line.prefix(line.count - trimmed.count))
            if trimmed.hasPrefix("bind ") {
                found.bind = true
                lines.append(indent + "bind 127.0.0.1:\(port)")
            } else if trimmed.hasPrefix("stats socket ") {
                found.socket = true
                let words = trimmed.split(separator: " ")
                lines.append(
                    indent + (["stats", "socket", socket] + words.dropFirst(3).map(String.init)).joined(separator: " "))
            } else if trimmed.hasPrefix("server ") {
                if !found.servers { lines += servers.map { indent + "server \($0.name) 127.0.0.1:\($0.port)" } }
                found.servers = true
            } else {
                lines.append(String(line))
            }
        }
        guard found.bind, found.socket, found.servers else {
            throw TestFailure("the HAProxy template lacks a bind, stats socket or server line (found: \(found))")
        }
        return lines.joined(separator: "\n")
    }

    /// Starts it on a free port (see ``NATSServerProcess/freePort()``) in front of `servers`, from the
    /// shipped configuration, and waits until the frontend answers HTTP and the runtime API answers.
    /// A port another program took first is retried on another.
    public static func start(
        servers: [(name: String, port: Int)], template: String? = nil, within bound: Duration = .seconds(30)
    ) async throws -> HAProxyProcess {
        guard let binary else { throw TestFailure(missing) }
        let text = try template ?? String(contentsOfFile: shippedConfiguration, encoding: .utf8)
        var attempt = 0
        while true {
            attempt += 1
            let directory = try NATSServerProcess.temporaryDirectory()
            let port = try NATSServerProcess.freePort()
            let path = directory + "/haproxy.cfg"
            try configuration(from: text, port: port, servers: servers, socket: directory + "/haproxy.sock").write(
                toFile: path, atomically: true, encoding: .utf8)
            let process = try TestProcess(binary, ["-f", path, "-db"], directory: directory)
            let proxy = HAProxyProcess(port: port, directory: directory, process: process)
            do {
                try await proxy.waitUntilAnswering(within: bound)
                return proxy
            } catch _ where attempt < 5 && proxy.log.contains("Address already in use") {
                await proxy.shutdown()
            } catch {
                await proxy.shutdown()
                throw error
            }
        }
    }

    /// Waits until the frontend answers an HTTP request (any status: with no server up it is 503)
    /// and the runtime API answers, failing early if the process ends.
    private func waitUntilAnswering(within bound: Duration) async throws {
        try await eventually("haproxy to answer on 127.0.0.1:\(port) and its runtime API", within: bound) {
            guard process.isRunning else { throw TestFailure("haproxy exited at start: \(log)") }
            guard let client = try? TestClient(port: port, readTimeout: .seconds(5)),
                (try? client.request("GET", "/healthz")) != nil
            else { return false }
            return (try? command("show info"))?.contains("Name: HAProxy") == true
        }
    }

    /// A new connection to the frontend.
    public func client(readTimeout: Duration = defaultBound, receiveBuffer: Int32? = nil) throws -> TestClient {
        try TestClient(port: port, readTimeout: readTimeout, receiveBuffer: receiveBuffer)
    }

    // MARK: the runtime API

    /// Sends one runtime-API command and returns the answer (the socket closes after it).
    @discardableResult
    public func command(_ line: String) throws -> String {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket(AF_UNIX) failed: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw TestFailure("socket path too long: \(socket)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            throw TestFailure("cannot connect to haproxy's runtime API at \(socket): errno \(errno)")
        }
        let request = Array((line + "\n").utf8)
        guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else {
            throw TestFailure("cannot send \(line) to haproxy: errno \(errno)")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw TestFailure("no answer from haproxy to \(line): errno \(errno)") }
            if count == 0 { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// Each server of the backend with its status as `show stat` gives it: `UP`, `DOWN`, `MAINT`,
    /// `UP 1/2` (going down), `DOWN 1/2` (coming up), `no check`.
    public func serverStatus() throws -> [String: String] {
        let lines = try command("show stat").split(separator: "\n")
        guard let header = lines.first, header.hasPrefix("# ") else {
            throw TestFailure("haproxy's show stat answered: \(lines.joined(separator: "\n"))")
        }
        let columns = header.dropFirst(2).split(separator: ",", omittingEmptySubsequences: false)
        guard let name = columns.firstIndex(of: "svname"), let proxy = columns.firstIndex(of: "pxname"),
            let status = columns.firstIndex(of: "status")
        else {
            throw TestFailure("haproxy's show stat has no svname/status column: \(header)")
        }
        var result: [String: String] = [:]
        for line in lines.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > status, fields[proxy] == Self.backend, fields[name] != "BACKEND" else { continue }
            result[String(fields[name])] = String(fields[status])
        }
        return result
    }

    /// Waits until server `name` has status `status` (`UP`, `DOWN`, `MAINT`).
    public func waitForServer(_ name: String, _ status: String, within bound: Duration = .seconds(30)) async throws {
        var last: [String: String] = [:]
        do {
            try await eventually("haproxy to see server \(name) \(status)", within: bound) {
                last = try serverStatus()
                return last[name] == status
            }
        } catch {
            throw TestFailure("\(error) (servers: \(last)); its log:\n\(log.suffix(3000))")
        }
    }

    /// Adds server `name` on 127.0.0.1:`port` to the backend with the health check of the shipped
    /// configuration (a server added at run time does not take `default-server`), enables it, and
    /// waits until its check passed. Start the instance first: an enabled server counts as up until
    /// its first check.
    public func addServer(_ name: String, port: Int, within bound: Duration = .seconds(30)) async throws {
        let options = try Self.defaultServerOptions(
            of: String(contentsOfFile: directory + "/haproxy.cfg", encoding: .utf8))
        for line in [
            "add server \(Self.backend)/\(name) 127.0.0.1:\(port) \(options)", "enable health \(Self.backend)/\(name)",
            "enable server \(Self.backend)/\(name)",
        ] {
            let answer = try command(line)
            // Each answers an empty line or a notice; anything with "error"/"unknown" failed.
            if answer.lowercased().contains("error") || answer.lowercased().contains("unknown")
                || answer.lowercased().contains("invalid")
            {
                throw TestFailure("haproxy refused \(line): \(answer)")
            }
        }
        try await waitForServer(name, "UP", within: bound)
    }

    /// What the configuration's `default-server` line sets (the health check options).
    static func defaultServerOptions(of configuration: String) throws -> String {
        guard
            let line = configuration.split(separator: "\n").map({ $0.drop { $0 == " " } }).first(where: {
                $0.hasPrefix("default-server ")
            })
        else {
            throw TestFailure("the HAProxy configuration has no default-server line")
        }
        return String(line.dropFirst("default-server ".count))
    }

    /// Stops it and removes its folder.
    public func shutdown() async {
        _ = try? await process.stop(signal: SIGKILL, within: .seconds(30))
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
