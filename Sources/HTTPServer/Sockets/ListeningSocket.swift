import CLinux
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// Opening listening sockets: non-blocking, close-on-exec, `SO_REUSEPORT` so every loop can
/// own a listener on the same port and the kernel spreads connections across them.
enum ListeningSocket {
    /// Fails with `EADDRINUSE` when something already listens on `address`, even a process that
    /// also set `SO_REUSEPORT` (which would otherwise silently share the port with us).
    static func ensureFree(_ address: SocketAddress) throws(IOError) {
        guard address.port != 0, let (initial, length) = address.storage() else { return }
        var storage = initial
        let fd = try Posix.blocking("socket") {
            Glibc.socket(address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | CLinux_SOCK_CLOEXEC, 0)
        }
        defer { Posix.close(fd) }
        try Posix.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        _ = try Posix.blocking("bind") {
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
            }
        }
    }

    /// Binds and listens on `address`; returns the descriptor and the address actually bound.
    static func open(_ address: SocketAddress, backlog: Int) throws(IOError) -> (fd: Int32, bound: SocketAddress) {
        guard var (storage, length) = address.storage() else {
            throw IOError(call: "inet_pton(\(address.host))", errno: EINVAL)
        }
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = try Posix.blocking("socket") {
            Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | CLinux_SOCK_NONBLOCK | CLinux_SOCK_CLOEXEC, 0)
        }
        do {
            try Posix.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            try Posix.setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, 1)
            _ = try Posix.blocking("bind") {
                withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
                }
            }
            _ = try Posix.blocking("listen") { Glibc.listen(fd, Int32(clamping: backlog)) }
            length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            var bound = sockaddr_storage()
            _ = try Posix.blocking("getsockname") {
                withUnsafeMutablePointer(to: &bound) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.getsockname(fd, $0, &length) }
                }
            }
            return (fd, SocketAddress(bound) ?? address)
        } catch {
            Posix.close(fd)
            throw error
        }
    }
}
