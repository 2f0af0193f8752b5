import CLinux
import Logs
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// Connections of a loop: accepting (with back-off when out of descriptors), timers, shutdown.
extension EventLoop {

    /// A fresh generation for a new connection's epoll token.
    func nextGeneration() -> UInt32 {
        generationCounter &+= 1
        return generationCounter
    }

    func markDirty(_ connection: Connection) {
        dirty.append(connection)
    }

    /// (Re)arms a connection's timer entry.
    func schedule(_ connection: Connection, at deadline: Duration, stamp: UInt64) {
        timers.push(
            TimerHeap.Entry(deadline: deadline, stamp: stamp, slot: connection.slot, generation: connection.generation))
    }

    func acceptConnections() {
        guard listenerFD >= 0, acceptPausedUntil == nil else { return }
        var address = sockaddr_storage()
        while true {
            let result: IOResult<Int32>
            do {
                result = try Posix.accept4(listenerFD, &address)
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO, EPERM:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    outOfResources(error)
                default:
                    logger.error("accept failed", ["error": .string(error.description)])
                }
                return
            }
            guard case .processed(let fd) = result else { break }
            let peerIP = IPAddress(address)
            let admission = limiter.admit(peerIP)
            if admission == .dropped {
                Posix.close(fd)
                continue
            }
            // Responses are written whole, so Nagle only adds latency.
            try? Posix.setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
            } else {
                slot = connections.count
                connections.append(nil)
            }
            let connection = Connection(
                fd: fd, slot: slot, peer: SocketAddress(address), peerIP: peerIP, admission: admission, loop: self)
            do {
                try epoll.add(fd, [.readable, .writable, .readHangUp, .edgeTriggered], token: connection.token)
            } catch {
                logger.error("epoll_ctl add failed; dropping the connection", ["error": .string(error.description)])
                Posix.close(fd)
                freeSlots.append(slot)
                limiter.release(admission)
                continue
            }
            connections[slot] = connection
            connectionCount += 1
            if admission == .refused {
                connection.refuse(.tooManyConnections)
            } else {
                connection.opened()
            }
        }
        if acceptBackoff != .zero {
            acceptBackoff = .zero
            logger.notice("accepting connections again", ["connections": .int(limiter.count)])
        }
    }

    /// Out of descriptors (or kernel memory): what waits in the backlog is accepted with the reserve
    /// descriptor and closed at once, so those clients learn it now instead of hanging; then accepting
    /// pauses, the pause doubling from 10 to 100 ms while it lasts, so a listener that stays readable
    /// is never spun on (ten rounds a second at most) and a new client waits 100 ms at most to learn
    /// it was shed. Connections already open keep being served throughout.
    func outOfResources(_ error: IOError) {
        var shed = 0
        if reserveFD >= 0 {
            Posix.close(reserveFD)
            var address = sockaddr_storage()
            // Bounded: a flood must not keep the loop from its other connections.
            while shed < 256, case .processed(let fd)? = try? Posix.accept4(listenerFD, &address) {
                Posix.close(fd)
                shed += 1
            }
            reserveFD = Self.openReserve()
        }
        if acceptBackoff == .zero {
            logger.warning(
                "out of descriptors or memory: new connections are closed at once until some close",
                [
                    "error": .string(error.description), "connections": .int(limiter.count), "shed": .int(shed),
                ])
        }
        acceptBackoff = min(max(acceptBackoff * 2, .milliseconds(10)), .milliseconds(100))
        acceptPausedUntil = now + acceptBackoff
    }

    /// Forgets a closed connection (its descriptor is already closed).
    func remove(_ connection: Connection) {
        connections[connection.slot] = nil
        freeSlots.append(connection.slot)
        connectionCount -= 1
        limiter.release(connection.admission)
        // A descriptor is free again: take back the reserve if shedding used it up.
        if reserveFD < 0 { reserveFD = Self.openReserve() }
    }

    func closeListener() {
        if listenerFD >= 0 {
            Posix.close(listenerFD)
            listenerFD = -1
        }
    }

    /// Stops accepting; idle connections close now, the rest when their work is done.
    func beginShutdown() {
        guard shutdownDeadline == nil else { return }
        shutdownDeadline = clock.now() + configuration.shutdownTimeout
        closeListener()
        for case let connection? in connections {
            connection.shutdown()
        }
        if connectionCount == 0 { running = false }
    }

    var isShuttingDown: Bool { shutdownDeadline != nil }

    /// During shutdown: every remaining connection has had its last byte written.
    var onlyLingeringConnectionsLeft: Bool {
        connections.allSatisfy { connection in
            guard let connection else { return true }
            return connection.machine.state == .lingering
        }
    }

    /// The shutdown deadline passed: every request still unanswered gets a 503, then all close.
    func shutdownDeadlinePassed() {
        for case let connection? in connections {
            connection.shutdownDeadlinePassed()
        }
    }

    func forceCloseAll() {
        for case let connection? in connections {
            connection.close(reason: "server shutdown deadline passed")
        }
    }
}
