import CLinux
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// An epoll instance: registrations carry a 64-bit token, waits fill a reusable event array.
struct Epoll: ~Copyable {
    /// Interest and readiness bits.
    struct Events: OptionSet, Sendable {
        let rawValue: UInt32
        static let readable = Events(rawValue: CLinux_EPOLLIN)
        static let writable = Events(rawValue: CLinux_EPOLLOUT)
        static let error = Events(rawValue: CLinux_EPOLLERR)
        static let hangUp = Events(rawValue: CLinux_EPOLLHUP)
        static let readHangUp = Events(rawValue: CLinux_EPOLLRDHUP)
        static let edgeTriggered = Events(rawValue: CLinux_EPOLLET)
    }

    let fd: Int32
    static let capacity = 256
    private let events = UnsafeMutablePointer<UInt32>.allocate(capacity: Epoll.capacity)
    private let tokens = UnsafeMutablePointer<UInt64>.allocate(capacity: Epoll.capacity)

    init() throws(IOError) {
        fd = try Posix.blocking("epoll_create1") { CLinux_epoll_create1(CLinux_EPOLL_CLOEXEC) }
    }

    deinit {
        events.deallocate()
        tokens.deallocate()
        Posix.close(fd)
    }

    func add(_ target: Int32, _ interest: Events, token: UInt64) throws(IOError) {
        _ = try Posix.blocking("epoll_ctl") {
            CLinux_epoll_ctl(fd, CLinux_EPOLL_CTL_ADD, target, interest.rawValue, token)
        }
    }

    func remove(_ target: Int32) {
        _ = try? Posix.blocking("epoll_ctl") { CLinux_epoll_ctl(fd, CLinux_EPOLL_CTL_DEL, target, 0, 0) }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever); returns how many events `event(at:)` can read.
    func wait(timeoutMilliseconds: Int32) throws(IOError) -> Int {
        switch try Posix.syscall(
            "epoll_wait", { CLinux_epoll_wait(fd, events, tokens, Int32(Epoll.capacity), timeoutMilliseconds) })
        {
        case .processed(let count): return Int(count)
        case .wouldBlock: return 0
        }
    }

    func event(at index: Int) -> (events: Events, token: UInt64) {
        (Events(rawValue: events[index]), tokens[index])
    }
}
