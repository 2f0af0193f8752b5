import Logs
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// The connection's thread: connects, serves the socket, reconnects, and runs every callback.
/// Only this thread touches its fields; it shares nothing with callers but ``NATSConnection/state``.
final class ConnectionDriver: @unchecked Sendable {
    let connection: NATSConnection
    let options: NATSOptions
    var logger: Logger { options.logger }
    /// The socket of the current connection, or -1.
    var socket: Int32 = -1
    /// The server of the current (or currently attempted) connection.
    var server = NATSServerAddress(host: "")
    let readBuffer = ReadBuffer()
    var parser = ServerOutputParser()
    /// Output taken from the shared buffer and being written; `written` bytes of it are done.
    var writing: [UInt8] = []
    var written = 0
    /// Keep-alive `PING`s sent since the last `PONG`.
    var pingsOutstanding = 0
    /// Whether the connection being torn down left for the preferred server (nothing went wrong).
    var moving = false

    init(connection: NATSConnection) {
        self.connection = connection
        self.options = connection.options
        parser.limits.maxControlLineBytes = options.maxControlLineBytes
    }

    /// Starts the thread, which runs until the connection is closed; returns why it could not.
    func startThread() -> NATSError? {
        let context = Unmanaged.passRetained(self).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                var driver: ConnectionDriver? = Unmanaged<ConnectionDriver>.fromOpaque(raw!).takeRetainedValue()
                let finished = driver!.connection.finished
                driver!.connection.state.withLock { $0.driverThread = pthread_self() }
                driver!.connection.driverThreadID.store(UInt(pthread_self()), ordering: .relaxed)
                driver!.run()
                // Let go of the connection before saying so: once close() returns, a connection
                // nobody else holds is gone.
                driver = nil
                finished.signal()
                return nil
            }, context)
        pthread_attr_destroy(&attributes)
        guard result == 0 else {
            Unmanaged<ConnectionDriver>.fromOpaque(context).release()
            return .systemCall("pthread_create failed: \(String(cString: strerror(result)))")
        }
        return nil
    }

    /// Connect, serve, reconnect, until closed.
    func run() {
        var start = 0
        var failedPasses = 0
        passes: while !connection.isClosing {
            let (servers, preferred) = connection.state.withLock { ($0.servers, $0.preferredServer) }
            var attempts: [String] = []
            var refusal: NATSError?
            // With a preferred server, a first round takes only it (known by name once its INFO is read); when
            // no server is it, or it cannot be reached, the second takes any. Failures count in the last round.
            let rounds: [String?] = preferred == nil ? [nil] : [preferred, nil]
            for (round, wanted) in rounds.enumerated() {
                let last = round == rounds.count - 1
                for offset in 0..<servers.count {
                    guard !connection.isClosing else { break passes }
                    let index = (start + offset) % servers.count
                    do {
                        guard try establish(servers[index], named: wanted) else { continue }
                    } catch {
                        closeSocket()
                        if error == .closed { break passes }
                        guard last else { continue }
                        attempts.append("\(servers[index]): \(error)")
                        if case .authorizationViolation = error { refusal = error }
                        if case .tlsRequired = error { refusal = error }
                        continue
                    }
                    failedPasses = 0
                    let reason = serve()
                    guard !connection.isClosing else { break passes }
                    teardown(reason)
                    start = index + 1
                    continue passes
                }
            }
            failedPasses += 1
            guard connection.passFailed(attempts: attempts, refusal: refusal, failedPasses: failedPasses) else { break }
            let delay = backoff(afterFailedPasses: failedPasses)
            if failedPasses & (failedPasses - 1) == 0 || failedPasses % 30 == 0 {
                logger.warning(
                    "no NATS server reachable; retrying",
                    [
                        "attempts": .string(attempts.joined(separator: "; ")), "pass": .int(failedPasses),
                        "retry_ms": .int(delay.milliseconds),
                    ])
            }
            do {
                _ = try waitFor(nil, events: 0, until: .now + delay)
            } catch {
                break
            }
        }
        finish()
    }

    /// Jittered exponential backoff: `reconnectWait` doubled per failed pass, capped, times 0.5–1.
    func backoff(afterFailedPasses passes: Int) -> Duration {
        let base = options.reconnectWait * (1 << min(passes - 1, 20))
        let capped = min(base, options.maxReconnectWait)
        return capped * Double.random(in: 0.5...1.0)
    }

    /// The connection ended while the client was not closing: fail what was in flight and report.
    func teardown(_ reason: String) {
        let lost = server
        closeSocket()
        let (replies, pings) = connection.state.withLock {
            state -> ([PendingReply], [@Sendable (Result<Void, NATSError>) -> Void]) in
            let ended = state.epoch
            state.epoch += 1
            state.outbound.removeAll()
            state.wakePending = false
            state.server = nil
            var replies: [PendingReply] = []
            for (token, reply) in state.replies where reply.epoch <= ended {
                replies.append(reply)
                state.replies[token] = nil
                if let sid = reply.sid { state.subscriptions[sid] = nil }
            }
            let pings = state.pings.filter { $0.epoch <= ended }.compactMap(\.completion)
            state.pings.removeAll { $0.epoch <= ended }
            return (replies, pings)
        }
        if moving {
            moving = false
            logger.notice(
                "NATS connection moves to the preferred server",
                [
                    "server": .string(lost.description), "preferred": .string(connection.preferredServer ?? ""),
                    "failed_requests": .int(replies.count),
                ])
        } else {
            logger.warning(
                "NATS connection lost; reconnecting",
                [
                    "server": .string(lost.description), "reason": .string(reason),
                    "failed_requests": .int(replies.count),
                ])
        }
        connection.setStatus(.reconnecting)
        let error = NATSError.connectionLost(server: lost.description, reason: reason)
        for reply in replies { reply.fail(error) }
        for ping in pings { ping(.failure(error)) }
    }

    /// The thread's last act: everything still waiting fails with `closed`.
    func finish() {
        closeSocket()
        connection.setStatus(.closed)
        connection.failEverything(with: .closed)
        logger.info("NATS connection closed")
    }

    func closeSocket() {
        if socket >= 0 { Posix.close(socket) }
        socket = -1
        readBuffer.reset()
        writing = []
        written = 0
    }
}

extension Duration {
    /// Whole milliseconds, rounded up (a poll timeout must not wake before the deadline).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
