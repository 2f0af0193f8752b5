#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A deliberately small blocking HTTP/1.1 client over a real TCP socket, for end-to-end tests.
/// Every read has a receive timeout (a safety net that fails the test; tests never wait on it).
final class TestConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `receiveBuffer` shrinks the kernel's receive buffer (set before connecting), to make a slow reader.
    init(port: Int, timeoutSeconds: Int = 10, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    func write(_ text: String) throws { try write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += n
        }
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        guard n > 0 else { throw Failure(description: errno == EAGAIN ? "timed out waiting for the server" : "recv: errno \(errno)") }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads up to and including `delimiter`.
    func read(until delimiter: [UInt8]) throws -> [UInt8] {
        while true {
            if let range = buffer.firstRange(of: delimiter) {
                let result = Array(buffer[..<range.upperBound])
                buffer.removeSubrange(..<range.upperBound)
                return result
            }
            guard try fill() else { throw Failure(description: "connection closed before \(String(decoding: delimiter, as: UTF8.self).debugDescription)") }
        }
    }

    func read(count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw Failure(description: "connection closed after \(buffer.count) of \(count) bytes") }
        }
        let result = Array(buffer[..<count])
        buffer.removeSubrange(..<count)
        return result
    }

    /// Whether the server closed the connection (after consuming what is buffered).
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Sends a request and reads one response (Content-Length or chunked bodies).
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil, json: Bool = true) throws -> TestResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: test\r\n"
        var allHeaders = headers
        if let body {
            if json, !headers.contains(where: { $0.0.lowercased() == "content-type" }) { allHeaders.append(("Content-Type", "application/json")) }
            allHeaders.append(("Content-Length", String(body.utf8.count)))
        }
        for (name, value) in allHeaders { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try write(head + (body ?? ""))
        return try readResponse(method: method)
    }

    func readResponse(method: String = "GET") throws -> TestResponse {
        let head = String(decoding: try read(until: Array("\r\n\r\n".utf8)), as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "bad status line \(statusLine)") }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = TestResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            response.body = try read(count: length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = String(decoding: try read(until: Array("\r\n".utf8)).dropLast(2), as: UTF8.self)
                let size = Int(sizeLine.split(separator: ";")[0], radix: 16) ?? 0
                if size == 0 {
                    _ = try read(until: Array("\r\n".utf8))
                    break
                }
                response.body += try read(count: size)
                _ = try read(count: 2)
            }
        }
        return response
    }

    /// Reads the next SSE event (skipping comments unless asked for).
    func nextEvent(includeComments: Bool = false) throws -> TestEvent {
        while true {
            let block = String(decoding: try read(until: Array("\n\n".utf8)).dropLast(2), as: UTF8.self)
            var event = TestEvent()
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    event.comment = String(line.dropFirst()).trimmingCharacters(in: .whitespaces)
                    continue
                }
                let pieces = line.split(separator: ":", maxSplits: 1)
                let name = String(pieces[0])
                var value = pieces.count > 1 ? String(pieces[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                switch name {
                case "event": event.event = value
                case "id": event.id = value
                case "data": event.data = event.data.map { $0 + "\n" + value } ?? value
                case "retry": event.retry = Int(value)
                default: break
                }
            }
            if event.event == nil, event.data == nil, event.id == nil {
                if includeComments, event.comment != nil { return event }
                continue
            }
            return event
        }
    }
}

struct TestResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (Foundation), for assertions.
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestConnection.Failure(description: "body is not a JSON object: \(text)")
        }
        return object
    }

    /// `error.code` of an error body.
    var errorCode: String? {
        ((try? json())?["error"] as? [String: Any])?["code"] as? String
    }

    var errorMessage: String? {
        ((try? json())?["error"] as? [String: Any])?["message"] as? String
    }
}

struct TestEvent: Equatable {
    var event: String?
    var id: String?
    var data: String?
    var retry: Int?
    var comment: String?

    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data((data ?? "").utf8), options: [.fragmentsAllowed])
    }
}
