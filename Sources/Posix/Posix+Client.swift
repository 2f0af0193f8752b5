import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A resolved socket address, in the kernel's form, ready for `connect`.
public struct ResolvedAddress: Sendable {
    /// `AF_INET` or `AF_INET6`.
    public var family: Int32
    /// The address itself.
    public var storage: sockaddr_storage
    /// How many bytes of `storage` are meaningful.
    public var length: socklen_t
}

/// The calls an outgoing (client) connection needs: name resolution, a non-blocking connect and `poll`.
extension Posix {
    /// `getaddrinfo(3)` for TCP: every IPv4/IPv6 address of `host`, in the resolver's order.
    /// Resolver failures (which are not `errno` values) name the host and the resolver's reason.
    public static func resolve(host: String, port: Int) throws(IOError) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let code = status == EAI_SYSTEM ? errno : 0
            throw IOError(
                call: "getaddrinfo", errno: code, path: host,
                reason: status == EAI_SYSTEM ? nil : String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var addresses: [ResolvedAddress] = []
        var entry = list
        while let current = entry {
            let info = current.pointee
            if info.ai_family == AF_INET || info.ai_family == AF_INET6, let address = info.ai_addr {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen)))
                }
                addresses.append(ResolvedAddress(family: info.ai_family, storage: storage, length: info.ai_addrlen))
            }
            entry = info.ai_next
        }
        return addresses
    }

    /// A non-blocking, close-on-exec TCP socket of `family`.
    public static func tcpSocket(family: Int32) throws(IOError) -> Int32 {
        try blocking("socket") {
            Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | CLinux_SOCK_NONBLOCK | CLinux_SOCK_CLOEXEC, 0)
        }
    }

    /// Starts a non-blocking `connect(2)`: `.processed` when connected at once, `.wouldBlock` while it
    /// is in progress (poll for `POLLOUT`, then ask ``socketError(_:)`` how it ended).
    public static func connect(_ fd: Int32, to address: ResolvedAddress) throws(IOError) -> IOResult<Void> {
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        if result == 0 { return .processed(()) }
        let code = errno
        switch code {
        // EINTR on a non-blocking connect leaves it running, exactly like EINPROGRESS.
        case EINPROGRESS, EALREADY, EINTR: return .wouldBlock
        case EBADF, EFAULT: preconditionFailure("connect failed with errno \(code): programming error")
        default: throw IOError(call: "connect", errno: code)
        }
    }

    /// The pending error of a socket (`SO_ERROR`): 0 once a non-blocking connect has succeeded.
    public static func socketError(_ fd: Int32) throws(IOError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try blocking("getsockopt") { Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) }
        return value
    }

    /// `poll(2)` over `fds` for at most `timeoutMilliseconds` (-1: no limit); returns how many are ready.
    /// An interrupted poll returns 0 (the caller recomputes its timeout and polls again).
    public static func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(IOError) -> Int {
        let count = nfds_t(fds.count)
        let result = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, count, timeoutMilliseconds) }
        if result >= 0 { return Int(result) }
        let code = errno
        if code == EINTR { return 0 }
        throw IOError(call: "poll", errno: code)
    }
}
