import CLinux
import Dispatch
import Logs
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server with Server-Sent Events over epoll: one event loop per core, each with its
/// own `SO_REUSEPORT` listener, so the kernel spreads connections across loops.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(), responder: app, logger: logger)
/// ShutdownSignals.block([SIGTERM, SIGINT])
/// let address = try server.start()
/// ShutdownSignals.shutdownOnSignal(server)
/// server.waitUntilStopped()
/// ```
public final class HTTPServer: Sendable {
    let configuration: Configuration
    let responder: any HTTPResponder
    let clock: any ServerClock
    let logger: Logger
    private let state = Mutex(RunState())
    private let stopped = DispatchGroup()

    private struct RunState {
        var loops: [EventLoop] = []
        var started = false
        var shuttingDown = false
    }

    /// A server that is not listening yet; call `start()`.
    public init(
        configuration: Configuration, responder: some HTTPResponder, clock: some ServerClock = MonotonicClock(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.responder = responder
        self.clock = clock
        self.logger = logger
    }

    /// Binds, spawns the loops and returns the bound address (port 0 becomes the real port). The
    /// connection limit is worked out here, from the open-file limit in force now (raise it first,
    /// e.g. with ``raiseOpenFileLimit()``).
    public func start() throws(IOError) -> SocketAddress {
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        precondition(!alreadyStarted, "HTTPServer.start() called twice")
        let openFileLimit = ConnectionLimiter.openFileLimit
        // The connection limits, counted across every loop.
        let limiter = ConnectionLimiter(configuration, openFileLimit: openFileLimit)
        if limiter.maxConnections >= openFileLimit {
            logger.warning(
                "the connection limit is not below the open-file limit: "
                    + "at the descriptor limit, new connections are closed unanswered",
                [
                    "max_connections": .int(limiter.maxConnections), "open_file_limit": .int(openFileLimit),
                ])
        }
        let count = max(1, configuration.loopCount ?? Int(CLinux_affinity_cpu_count()))
        var address = SocketAddress(host: configuration.host, port: configuration.port)
        var loops: [EventLoop] = []
        try ListeningSocket.ensureFree(address)
        do throws(IOError) {
            for index in 0..<count {
                let (fd, bound) = try ListeningSocket.open(address, backlog: configuration.backlog)
                // Later listeners join the port the first one got (matters for port 0).
                address = bound
                do throws(IOError) {
                    loops.append(try EventLoop(index: index, listener: fd, server: self, limiter: limiter))
                } catch {
                    Posix.close(fd)
                    throw error
                }
            }
        } catch {
            for loop in loops { loop.closeListener() }
            throw error
        }
        let started = loops
        state.withLock { $0.loops = started }
        if !clock.advancesByItself {
            // Weak: the clock may outlive the server (and the responder may hold the clock), so a strong
            // capture would keep the loops, the responder and everything it holds alive for good.
            clock.onAdvance { [weak self] in
                for loop in self?.loops ?? [] { loop.wakeUp() }
            }
        }
        for loop in loops {
            stopped.enter()
            loop.startThread { [stopped] in stopped.leave() }
        }
        logger.info(
            "listening",
            [
                "address": .string(address.description), "loops": .int(count),
                "max_connections": .int(limiter.maxConnections),
                "max_connections_per_address": .int(limiter.maxPerAddress ?? 0),
            ])
        return address
    }

    /// Graceful shutdown: stop accepting, let in-flight requests finish, end event streams, and
    /// close whatever remains after `shutdownTimeout`. Returns at once; see `waitUntilStopped()`.
    public func shutdown() {
        let loops = state.withLock { state -> [EventLoop] in
            if state.shuttingDown { return [] }
            state.shuttingDown = true
            return state.loops
        }
        guard !loops.isEmpty else { return }
        logger.info("shutting down", ["deadline_ms": .int(Int(configuration.shutdownTimeout.milliseconds))])
        for loop in loops {
            loop.execute { loop.beginShutdown() }
        }
    }

    /// Blocks until every loop has stopped (after `shutdown()`); returns at once if never started.
    public func waitUntilStopped() {
        stopped.wait()
    }

    /// Raises the soft open-file limit to the hard limit, so many connections can be held.
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The loops, for tests and statistics.
    var loops: [EventLoop] { state.withLock { $0.loops } }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
