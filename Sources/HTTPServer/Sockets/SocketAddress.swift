#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric host, e.g. `"127.0.0.1"` or `"::1"`.
    public var host: String
    /// The port in host byte order.
    public var port: Int
    /// Whether the address is IPv6.
    public var isIPv6: Bool { host.contains(":") }

    /// An address from a numeric host and a port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:8080`, or `[::1]:8080` for IPv6.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Decodes a kernel address; nil for families other than IPv4 and IPv6.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(storage.ss_family) {
        case AF_INET:
            let (address, port) = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ($0.pointee.sin_addr, $0.pointee.sin_port) }
            }
            var copy = address
            inet_ntop(AF_INET, &copy, &buffer, socklen_t(buffer.count))
            self.init(
                host: String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self),
                port: Int(UInt16(bigEndian: port)))
        case AF_INET6:
            let (address, port) = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    ($0.pointee.sin6_addr, $0.pointee.sin6_port)
                }
            }
            var copy = address
            inet_ntop(AF_INET6, &copy, &buffer, socklen_t(buffer.count))
            self.init(
                host: String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self),
                port: Int(UInt16(bigEndian: port)))
        default:
            return nil
        }
    }

    /// The kernel form of this address; nil when `host` is not a numeric IPv4/IPv6 address.
    func storage() -> (sockaddr_storage, socklen_t)? {
        var storage = sockaddr_storage()
        if !isIPv6 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee = address }
            }
            return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee = address }
        }
        return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
    }
}
