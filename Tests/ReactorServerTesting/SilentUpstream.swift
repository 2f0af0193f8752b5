import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An upstream that accepts connections, reads what they send and never answers (a backend that
/// hangs), recording each request as it arrives and each connection its client closes: a test can
/// tell that whoever asked gave up (cancelled its request) rather than waited. Unlike a
/// ``HoldingResponder``, which keeps a half-closed connection open to answer it, it sees the close.
///
/// ```swift
/// try await withSilentUpstream { upstream in
///     // … something sends a request to 127.0.0.1:upstream.port …
///     try await upstream.events.next("the request") { if case .request = $0 { true } else { false } }
///     try await upstream.events.next("its connection to close") { $0 == .closed(connection: 0) }
/// }
/// ```
public final class SilentUpstream: Sendable {
    /// What happened on the upstream's connections, numbered 0, 1, … in the order they were accepted.
    public enum Event: Sendable, Equatable {
        /// The connection sent a request head (request line and headers, as text).
        case request(connection: Int, head: String)
        /// The client closed the connection (end of input, or a reset).
        case closed(connection: Int)
    }

    /// Every event, in order.
    public let events = Recorder<Event>()
    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: Int32
    /// The connections still open, so that ``close()`` can end them.
    private let open = Mutex<[Int32]>([])

    /// Listens on 127.0.0.1 at a free port and starts accepting.
    public init() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(listener)
            throw TestFailure("listening on 127.0.0.1:0: errno \(errno)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    /// Stops accepting and closes every connection still open; its threads then end.
    public func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        open.withLock { fds in
            for fd in fds { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptConnections() {
        var number = 0
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Shut down by close().
                Glibc.close(listener)
                return
            }
            open.withLock { $0.append(fd) }
            let connection = number
            number += 1
            Thread.detachNewThread { [self] in read(fd, connection: connection) }
        }
    }

    /// Reads until the client closes; records the request head once it is complete.
    private func read(_ fd: Int32, connection: Int) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headSeen = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            guard !headSeen else { continue }
            received += buffer[..<count]
            if let end = String(decoding: received, as: UTF8.self).range(of: "\r\n\r\n") {
                headSeen = true
                events.record(
                    .request(
                        connection: connection,
                        head: String(String(decoding: received, as: UTF8.self)[..<end.lowerBound])))
            }
        }
        open.withLock { $0.removeAll { $0 == fd } }
        Glibc.close(fd)
        events.record(.closed(connection: connection))
    }
}

extension SilentUpstream.Event {
    /// The request head, for a `.request`.
    public var head: String? {
        if case .request(_, let head) = self { head } else { nil }
    }
}

/// Runs `body` with a ``SilentUpstream``, closed afterwards however `body` ends.
public func withSilentUpstream<T>(_ body: (SilentUpstream) async throws -> T) async throws -> T {
    let upstream = try SilentUpstream()
    defer { upstream.close() }
    return try await body(upstream)
}
