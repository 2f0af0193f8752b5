import Foundation
import HTTPServer
import Logs
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A responder built from a closure, for tests.
struct ClosureResponder: HTTPResponder {
    let handler: @Sendable (HTTPRequest, HTTPResponseWriter) -> Void
    init(_ handler: @escaping @Sendable (HTTPRequest, HTTPResponseWriter) -> Void) { self.handler = handler }
    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) { handler(request, writer) }
}

/// Echoes method, path and body length; the default app of the integration tests.
let echoResponder = ClosureResponder { request, writer in
    let text = "\(request.method.rawValue) \(request.path) \(request.body.count)"
    writer.respond(status: 200, headers: ["Content-Type": "text/plain"], body: Array(text.utf8))
}

/// A server on 127.0.0.1:0 for the duration of `body`, then shut down and awaited.
func withServer<R>(
    _ responder: some HTTPResponder = echoResponder,
    clock: some ServerClock = MonotonicClock(),
    configure: (inout HTTPServer.Configuration) -> Void = { _ in },
    _ body: (HTTPServer, SocketAddress) async throws -> R
) async throws -> R {
    var configuration = HTTPServer.Configuration()
    configuration.port = 0
    configuration.loopCount = 2
    // On the real clock a test that waits long (a loaded machine, the cooperative pool busy with other
    // tests) would see a keep-alive comment where it expects an event; manual-clock tests keep 15 s.
    if !(clock is ManualClock) { configuration.eventStreamKeepAliveInterval = .seconds(3600) }
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, responder: responder, clock: clock, logger: .disabled)
    let address = try server.start()
    do {
        let result = try await body(server, address)
        server.shutdown()
        server.waitUntilStopped()
        return result
    } catch {
        server.shutdown()
        server.waitUntilStopped()
        throw error
    }
}

struct TestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A blocking TCP client with a receive timeout, so a missing answer fails the test instead of hanging it.
final class TestClient {
    let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects; `receiveBuffer` shrinks the kernel's receive buffer first (so a client that does
    /// not read backs the server up quickly); `source` binds the client to a loopback address of its
    /// own (`127.0.0.2`: all of 127/8 is local on Linux), so limits per client address can be tested.
    init(_ address: SocketAddress, timeoutSeconds: Int = 10, receiveBuffer: Int32? = nil, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket failed") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw TestError("bind to \(source) failed: errno \(errno)") }
        }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(address.port).bigEndian
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw TestError("connect failed: errno \(errno)") }
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestError("send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Aborts the connection with a reset (SO_LINGER 0).
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Reads more bytes; nil at end of stream. Throws on timeout.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        if n < 0 {
            if errno == ECONNRESET { return false }
            throw TestError("recv failed or timed out: errno \(errno)")
        }
        buffered.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads until `marker` appears; returns everything up to and including it.
    func read(until marker: String) throws -> String {
        let needle = Array(marker.utf8)
        while true {
            if let range = find(needle) {
                let out = Array(buffered[..<range])
                buffered.removeFirst(range)
                return String(decoding: out, as: UTF8.self)
            }
            guard try fill() else { throw TestError("connection closed before \(marker.debugDescription); got \(String(decoding: buffered, as: UTF8.self).debugDescription)") }
        }
    }

    private func find(_ needle: [UInt8]) -> Int? {
        buffered.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, haystack.count >= needle.count else { return nil }
                let first = Int32(needle[0])
                var start = 0
                while start + needle.count <= haystack.count {
                    guard let hit = memchr(base + start, first, haystack.count - needle.count - start + 1) else { return nil }
                    let offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + offset, needle.baseAddress!, needle.count) == 0 { return offset + needle.count }
                    start = offset + 1
                }
                return nil
            }
        }
    }

    /// Reads one response (Content-Length framed, or to end of stream without one).
    func readResponse() throws -> TestResponse {
        let head = try read(until: "\r\n\r\n")
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw TestError("bad status line \(statusLine)") }
        var headers: [(String, String)] = []
        for line in lines {
            let pair = line.split(separator: ":", maxSplits: 1)
            headers.append((String(pair[0]), pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""))
        }
        var response = TestResponse(status: status, headers: headers, body: [])
        if status == 100 || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            while buffered.count < length {
                guard try fill() else { throw TestError("closed mid-body") }
            }
            response.body = Array(buffered[..<length])
            buffered.removeFirst(length)
        } else {
            while try fill() {}
            response.body = buffered
            buffered = []
        }
        return response
    }

    /// Everything left until the server closes the connection.
    func readRemaining() throws -> String {
        while try fill() {}
        defer { buffered = [] }
        return String(decoding: buffered, as: UTF8.self)
    }

    /// True when the server closed the connection (end of stream or reset) before `timeout`.
    func waitForClose() throws -> Bool {
        while true {
            guard try fill() else { return true }
        }
    }
}

struct TestResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first(where: { $0.0.lowercased() == name.lowercased() })?.1 }
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Values reported by the server (notices, log records) as they happen; `next` waits for the
/// next one (resumed by `record` itself), failing only after a generous safety timeout.
final class Recorder<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let matching: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Value, any Error>
    }
    private struct State {
        var values: [Value] = []
        var waiter: Waiter?
        var nextID = 0
    }
    private let state = Mutex(State())

    init() {}

    func record(_ value: Value) {
        let waiter = state.withLock { state -> Waiter? in
            if let waiter = state.waiter, waiter.matching(value) {
                state.waiter = nil
                return waiter
            }
            state.values.append(value)
            return nil
        }
        waiter?.continuation.resume(returning: value)
    }

    /// The next value satisfying `matching`; earlier values that do not match are dropped.
    func next(timeout: Duration = .seconds(20), where matching: @escaping @Sendable (Value) -> Bool = { _ in true }) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if let index = state.values.firstIndex(where: matching) {
                    let value = state.values[index]
                    state.values.removeFirst(index + 1)
                    continuation.resume(returning: value)
                    return nil
                }
                state.values.removeAll()
                state.nextID += 1
                state.waiter = Waiter(id: state.nextID, matching: matching, continuation: continuation)
                return state.nextID
            }
            guard let id else { return }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                let expired = state.withLock { state -> Waiter? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter
                }
                expired?.continuation.resume(throwing: TimedOut(description: "nothing recorded within \(timeout)"))
            }
        }
    }
}

/// A log handler feeding a `Recorder`, to wait for what the server logs.
struct ForwardingLogHandler: LogHandler {
    let recorder: Recorder<LogRecord>
    func log(_ record: LogRecord) { recorder.record(record) }
}

extension TestClient {
    /// Sets how long a read may wait before it fails.
    func setReadTimeout(milliseconds: Int) {
        var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Advances `clock` by `step` until the server closes the connection; returns what arrived meanwhile.
    func advance(_ clock: ManualClock, by step: Duration, untilClosedWithin attempts: Int = 200) throws -> String {
        setReadTimeout(milliseconds: 50)
        var received: [UInt8] = []
        for _ in 0..<attempts {
            clock.advance(by: step)
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 { received.append(contentsOf: chunk[0..<n]); continue }
                if n == 0 || errno == ECONNRESET { return String(decoding: received, as: UTF8.self) }
                break
            }
        }
        throw TestError("the server did not close the connection; received \(String(decoding: received, as: UTF8.self).debugDescription)")
    }
}
