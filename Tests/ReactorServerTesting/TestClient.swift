import Foundation
import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// A deliberately small blocking HTTP/1.1 client over one real TCP connection: requests and responses
/// (Content-Length, chunked, or to end of stream), raw bytes for malformed input, and Server-Sent
/// Events. Every read is bounded: when the server sends nothing for `readTimeout`, the read fails
/// with a ``TestFailure`` saying what it waited for.
///
/// ```swift
/// let client = try TestClient(port: server.port)
/// let created = try client.request("POST", "/sessions", body: #"{"reactor":"counter","id":"c"}"#)
/// let stream = try TestClient(port: server.port)
/// try stream.openEventStream("/sessions/c/events")
/// #expect(try stream.nextEvent().id == "0")
/// try client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Half: ")   // anything, byte for byte
/// ```
public final class TestClient {
    /// The socket, for the odd test that needs a system call of its own (`FIONREAD`).
    public let fd: Int32
    /// Who this connects to, for messages.
    public let port: Int
    private var buffer: [UInt8] = []
    private var readTimeout: Duration

    /// Connects to `host:port`. `receiveBuffer` shrinks the kernel's receive buffer first, to make a
    /// reader that backs the server up quickly; `source` connects from a loopback address of its own
    /// (`127.0.0.2`: all of 127/8 is local on Linux), to be another client address.
    public init(
        port: Int, host: String = "127.0.0.1", readTimeout: Duration = defaultBound, receiveBuffer: Int32? = nil,
        source: String? = nil
    ) throws {
        self.port = port
        self.readTimeout = readTimeout
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                // No close here: a class whose properties are all set runs `deinit` when its init
                // throws, and a second close could take a descriptor another thread just opened
                // (an in-process server's connection, which then died reading it: EBADF).
                throw TestFailure("bind to \(source): errno \(errno)")
            }
        }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        setReadTimeout(readTimeout)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            // `deinit` closes the socket (see above).
            throw TestFailure("connect to \(host):\(port): errno \(errno)")
        }
    }

    /// Connects to `address` (as an HTTP server's `start()` returned it).
    public convenience init(
        _ address: SocketAddress, readTimeout: Duration = defaultBound, receiveBuffer: Int32? = nil,
        source: String? = nil
    ) throws {
        try self.init(
            port: address.port, host: address.host, readTimeout: readTimeout, receiveBuffer: receiveBuffer,
            source: source)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Changes how long one read may wait for the server.
    public func setReadTimeout(_ timeout: Duration) {
        readTimeout = timeout
        let microseconds = max(
            1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000)
        var value = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    // MARK: sending

    /// Whether bytes from the server are waiting to be read (or it closed), without waiting for any.
    public var hasInput: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return !buffer.isEmpty || poll(&descriptor, 1, 0) > 0
    }

    /// Sends `text` as it is.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends `bytes` as they are.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw TestFailure("send to port \(port): errno \(errno)") }
            offset += n
        }
    }

    /// Aborts the connection with a reset (SO_LINGER 0), as a crashing client would.
    public func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: reading

    /// Reads more bytes into the buffer; false at end of stream (or reset). `what` names what the
    /// caller waits for, for the failure at the bound.
    private func fill(_ what: @autoclosure () -> String) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        if n < 0 {
            // A signal (a debugger attaching, a child exiting) interrupts the wait; it is not an answer.
            if errno == EINTR { return try fill(what()) }
            if errno == ECONNRESET { return false }
            let received = String(decoding: buffer.suffix(300), as: UTF8.self)
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw TestFailure(
                    "waited \(readTimeout.spoken) for \(what()) from port \(port); "
                        + "nothing more came (buffered: \(received.debugDescription))"
                )
            }
            throw TestFailure("recv from port \(port) while waiting for \(what()): errno \(errno)")
        }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads up to and including `delimiter`.
    public func read(until delimiter: String) throws -> String {
        let needle = Array(delimiter.utf8)
        // Bytes already searched are not searched again after a read: a stream backed up by megabytes
        // (a stalled subscriber catching up) is scanned once, not once per read. memchr and memcmp: the
        // generic `firstRange(of:)` allocated per position and, under the sanitizers, held a
        // concurrency thread for minutes, starving every in-process server's effects.
        var searched = 0
        while true {
            if let end = Self.end(of: needle, in: buffer, from: searched) {
                let result = Array(buffer[..<end])
                buffer.removeSubrange(..<end)
                return String(decoding: result, as: UTF8.self)
            }
            searched = max(0, buffer.count - needle.count + 1)
            guard try fill(delimiter.debugDescription) else {
                throw TestFailure(
                    "port \(port) closed the connection before \(delimiter.debugDescription); "
                        + "got \(String(decoding: buffer, as: UTF8.self).debugDescription)"
                )
            }
        }
    }

    /// The offset just past the first `needle` in `haystack` at or after `start`, nil when there is none.
    static func end(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first else { return nil }
        return haystack.withUnsafeBufferPointer { hay -> Int? in
            guard let base = hay.baseAddress else { return nil }
            var index = start
            while index + needle.count <= hay.count {
                guard let found = memchr(base + index, Int32(first), hay.count - index) else { return nil }
                let at = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
                guard at + needle.count <= hay.count else { return nil }
                if memcmp(base + at, needle, needle.count) == 0 { return at + needle.count }
                index = at + 1
            }
            return nil
        }
    }

    /// Reads exactly `count` bytes.
    public func read(count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill("\(count) bytes") else {
                throw TestFailure("port \(port) closed the connection after \(buffer.count) of \(count) bytes")
            }
        }
        let result = Array(buffer[..<count])
        buffer.removeSubrange(..<count)
        return result
    }

    /// Reads until the server closes the connection and returns what came meanwhile; fails if it
    /// does not close within the read timeout.
    @discardableResult
    public func readToEnd(within bound: Duration = defaultBound) throws -> [UInt8] {
        let start = ContinuousClock.now
        // Bounded as a whole: a stream's keep-alives would renew each read's timeout for ever.
        while try fill("the server to close the connection") {
            guard ContinuousClock.now - start < bound else {
                throw TestFailure("the server did not close the connection within \(bound.spoken)")
            }
        }
        defer { buffer = [] }
        return buffer
    }

    // MARK: HTTP

    /// Sends a request and reads its response. A `body` gets `Content-Length` and, unless `json` is false or
    /// the headers name one, `Content-Type: application/json`.
    public func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil, json: Bool = true
    ) throws -> TestResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: test\r\n"
        var fields = headers
        if let body {
            if json, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                fields.append(("Content-Type", "application/json"))
            }
            fields.append(("Content-Length", String(body.utf8.count)))
        }
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        try send(head + "\r\n" + (body ?? ""))
        return try readResponse(method: method)
    }

    /// Reads one response: its head, then a body framed by Content-Length, chunked encoding, or (for
    /// neither) the end of the stream. `method` says whether a body follows (not for HEAD).
    public func readResponse(method: String = "GET") throws -> TestResponse {
        let head = try read(until: "\r\n\r\n")
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw TestFailure("bad status line \(statusLine.debugDescription)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = TestResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            response.body = try read(count: length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try read(until: "\r\n").dropLast(2)
                let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) ?? 0
                if size == 0 {
                    _ = try read(until: "\r\n")
                    break
                }
                response.body += try read(count: size)
                _ = try read(count: 2)
            }
        } else if response.header("Content-Type")?.hasPrefix("text/event-stream") != true {
            response.body = try readToEnd()
        }
        return response
    }

    // MARK: Server-Sent Events

    /// Sends `GET path` for an event stream and reads the response head (the events follow through
    /// ``nextEvent(includeComments:)``); fails unless it is `200 text/event-stream`.
    @discardableResult
    public func openEventStream(_ path: String, headers: [(String, String)] = []) throws -> TestResponse {
        var head = "GET \(path) HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try send(head + "\r\n")
        let response = try readResponse()
        guard response.status == 200, response.header("Content-Type")?.hasPrefix("text/event-stream") == true else {
            throw TestFailure("GET \(path) did not open an event stream: \(response.status) \(response.text)")
        }
        return response
    }

    /// Reads the next event; comment-only blocks (keep-alives) are skipped unless `includeComments`.
    /// Fails when no event comes within `bound`, keep-alives or not (each read alone is bounded by the
    /// read timeout, which a keep-alive every few seconds would otherwise renew for ever).
    public func nextEvent(includeComments: Bool = false, within bound: Duration = defaultBound) throws -> TestEvent {
        let start = ContinuousClock.now
        while true {
            let block = try read(until: "\n\n").dropLast(2)
            let event = TestEvent(block: String(block))
            if event.isComment && !includeComments {
                guard ContinuousClock.now - start < bound else {
                    throw TestFailure("no event within \(bound.spoken), only keep-alives")
                }
                continue
            }
            return event
        }
    }
}
