import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on 127.0.0.1 in front of one upstream port, whose traffic a test can stop and start
/// again: paused, it reads nothing more and forwards nothing, in either direction, on any connection
/// (what was sent waits in the sockets, as on a network that stalls), and connections opened meanwhile
/// wait too. It cuts an instance off from its NATS server without stopping the server for everyone.
///
/// ```swift
/// let relay = try PausableTCPRelay(upstreamPort: nats.port)
/// relay.pause()      // the instance behind it hears nothing, and is not heard
/// relay.resume()     // what was held goes through, in order
/// ```
public final class PausableTCPRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let paused = NSCondition()
    private let state = Mutex(State())

    private struct State {
        var paused = false
        var stopped = false
        var descriptors: [Int32] = []
    }

    /// Listens on a free port and relays every connection to `upstreamPort`.
    public init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("relay: socket failed (errno \(errno))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw TestFailure("relay: cannot listen on 127.0.0.1 (errno \(errno))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "relay accept"
        thread.start()
    }

    deinit { stop() }

    /// Stops all traffic until ``resume()``.
    public func pause() {
        paused.lock()
        state.withLock { $0.paused = true }
        paused.unlock()
    }

    /// Lets the held traffic through, and what follows.
    public func resume() {
        paused.lock()
        state.withLock { $0.paused = false }
        paused.broadcast()
        paused.unlock()
    }

    /// Closes the listener and every relayed connection.
    public func stop() {
        let descriptors = state.withLock { state -> [Int32] in
            guard !state.stopped else { return [] }
            state.stopped = true
            return state.descriptors + [listener]
        }
        for fd in descriptors { shutdown(fd, Int32(SHUT_RDWR)) }
        resume()
    }

    /// Waits while paused; false once stopped.
    private func waitWhilePaused() -> Bool {
        paused.lock()
        defer { paused.unlock() }
        while state.withLock({ $0.paused && !$0.stopped }) { paused.wait() }
        return !state.withLock { $0.stopped }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            guard waitWhilePaused(), let upstream = connectUpstream() else {
                close(client)
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            state.withLock { $0.descriptors += [client, upstream] }
            for (from, to) in [(client, upstream), (upstream, client)] {
                let thread = Thread { [self] in pump(from: from, to: to) }
                thread.name = "relay pump"
                thread.start()
            }
        }
    }

    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(upstreamPort).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Copies `from` to `to` until either ends; each chunk read waits for a resume before it goes on,
    /// and nothing more is read meanwhile.
    private func pump(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer { shutdown(to, Int32(SHUT_WR)) }
        while waitWhilePaused() {
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            guard waitWhilePaused() else { return }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes {
                    send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                sent += written
            }
        }
    }
}
