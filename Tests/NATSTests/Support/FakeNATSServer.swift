import Foundation
import ReactorServerTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP listener on 127.0.0.1 that plays a NATS server badly on purpose: it sends `greeting` to
/// every client that connects and then closes (for TLS-only servers and broken ones).
final class FakeNATSServer: Sendable {
    let port: Int
    private let fd: Int32
    private let stopped = Mutex(false)

    init(greeting: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw TestFailure("fake server: bind/listen failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let listener = fd
        let bytes = Array(greeting.utf8)
        Thread.detachNewThread { [self] in
            while !stopped.withLock({ $0 }) {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(client)
            }
        }
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    func stop() {
        stopped.withLock { $0 = true }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
