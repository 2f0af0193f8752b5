import Posix
import CLinux
import Logs
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
        timers.push(TimerHeap.Entry(deadline: deadline, stamp: stamp, slot: connection.slot, generation: connection.generation))
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
                    // Out of descriptors or memory: retry later instead of spinning on a listener
                    // that stays readable.
                    acceptPausedUntil = now + .milliseconds(100)
                    logger.warning("accept paused for 100 ms", ["error": .string(error.description), "connections": .int(connectionCount)])
                default:
                    logger.error("accept failed", ["error": .string(error.description)])
                }
                return
            }
            guard case .processed(let fd) = result else { return }
            // Responses are written whole, so Nagle only adds latency.
            try? Posix.setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
            } else {
                slot = connections.count
                connections.append(nil)
            }
            let connection = Connection(fd: fd, slot: slot, peer: SocketAddress(address), loop: self)
            do {
                try epoll.add(fd, [.readable, .writable, .readHangUp, .edgeTriggered], token: connection.token)
            } catch {
                logger.error("epoll_ctl add failed; dropping the connection", ["error": .string(error.description)])
                Posix.close(fd)
                freeSlots.append(slot)
                continue
            }
            connections[slot] = connection
            connectionCount += 1
            connection.opened()
        }
    }

    /// Forgets a closed connection (its descriptor is already closed).
    func remove(_ connection: Connection) {
        connections[connection.slot] = nil
        freeSlots.append(connection.slot)
        connectionCount -= 1
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
            if case .lingering = connection.state { return true }
            return false
        }
    }

    func forceCloseAll() {
        for case let connection? in connections {
            connection.close(reason: "server shutdown deadline passed")
        }
    }
}
