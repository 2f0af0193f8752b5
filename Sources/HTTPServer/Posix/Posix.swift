import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// The outcome of a non-blocking system call: done with a value, or it would have blocked.
enum IOResult<T> {
    case processed(T)
    case wouldBlock
}

/// Every system call the server makes goes through here: the one place that retries `EINTR`,
/// turns `EAGAIN` into `.wouldBlock` and everything else into an `IOError` naming the call.
enum Posix {
    /// Runs `body` until it stops failing with `EINTR`; `-1` results become `.wouldBlock` or an `IOError`.
    @inline(__always)
    static func syscall<T: FixedWidthInteger>(_ name: StaticString, _ body: () -> T) throws(IOError) -> IOResult<T> {
        while true {
            let result = body()
            if result != -1 { return .processed(result) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN: return .wouldBlock
            case EBADF, EFAULT:
                // A closed or bogus descriptor/pointer is a bug in this server, not a runtime condition.
                preconditionFailure("\(name) failed with errno \(code): programming error")
            default: throw IOError(call: "\(name)", errno: code)
            }
        }
    }

    /// Like `syscall`, for calls that never legitimately block (bind, listen, setsockopt…).
    @inline(__always)
    static func blocking<T: FixedWidthInteger>(_ name: StaticString, _ body: () -> T) throws(IOError) -> T {
        switch try syscall(name, body) {
        case .processed(let value): return value
        case .wouldBlock: throw IOError(call: "\(name)", errno: EAGAIN)
        }
    }

    /// Closes `fd`; errors other than `EBADF` are meaningless after close on Linux and are ignored.
    static func close(_ fd: Int32) {
        let result = Glibc.close(fd)
        precondition(result == 0 || errno != EBADF, "close(\(fd)) of a descriptor that was not open")
    }

    /// `read(2)` into `buffer`; `.processed(0)` is end of stream.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `writev(2)` without `SIGPIPE` (via `sendmsg` with `MSG_NOSIGNAL`).
    static func writev(_ fd: Int32, _ iov: UnsafePointer<iovec>, _ count: Int32) throws(IOError) -> IOResult<Int> {
        try syscall("writev") { CLinux_writev_nosignal(fd, iov, count) }
    }

    /// `send(2)` without `SIGPIPE`.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, CLinux_MSG_NOSIGNAL) }
    }

    /// `accept4(2)` with the new descriptor non-blocking and close-on-exec.
    static func accept4(_ fd: Int32, _ address: inout sockaddr_storage) throws(IOError) -> IOResult<Int32> {
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return try syscall("accept4") {
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CLinux_accept4(fd, $0, &length, CLinux_SOCK_NONBLOCK | CLinux_SOCK_CLOEXEC)
                }
            }
        }
    }

    /// Sets an integer socket option.
    static func setsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(IOError) {
        var value = value
        _ = try blocking("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// `eventfd(2)`, non-blocking and close-on-exec.
    static func eventfd() throws(IOError) -> Int32 {
        try blocking("eventfd") { CLinux_eventfd(0, CLinux_EFD_NONBLOCK | CLinux_EFD_CLOEXEC) }
    }

    /// Adds one to an eventfd counter, waking whoever polls it.
    static func signal(eventfd fd: Int32) {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated: the reader is already due to wake.
        _ = try? syscall("write") { Glibc.write(fd, &one, 8) }
    }

    /// Resets an eventfd counter.
    static func drain(eventfd fd: Int32) {
        var value: UInt64 = 0
        _ = try? syscall("read") { Glibc.read(fd, &value, 8) }
    }
}
