import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// One operation from the server, copied out of the read buffer.
enum Incoming {
    case info(ServerInfo)
    case message(sid: UInt64, NATSMessage)
    case ping
    case pong
    case ok
    case error(String)
    /// A message whose header block was malformed: dropped (and logged), the connection lives on.
    case skipped
}

/// Serving a live connection: read and dispatch, write what callers queued, keep-alive pings,
/// deadlines. Returns (ending the connection) only on a network or protocol failure, or on close.
extension ConnectionDriver {
    /// Runs the connection until it ends; returns why.
    func serve() -> String {
        var nextPing = ContinuousClock.now + options.pingInterval
        while true {
            if connection.isClosing {
                _ = writePending()
                return "closed by the client"
            }
            if let failure = writePending() { return failure }
            if connection.takeMoveRequest() {
                moving = true
                return "moving to the preferred server"
            }
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN) | (written < writing.count ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: connection.wakeFD, events: Int16(POLLIN), revents: 0),
            ]
            let now = ContinuousClock.now
            var until = nextPing
            if let deadline = connection.nextDeadline(), deadline < until { until = deadline }
            do {
                _ = try Posix.poll(
                    &fds, timeoutMilliseconds: until <= now ? 0 : Int32(clamping: (until - now).milliseconds))
            } catch {
                return "\(error)"
            }
            if fds[1].revents != 0 { Posix.drain(eventfd: connection.wakeFD) }
            if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                if let ended = readSome() { return ended }
                do {
                    while let operation = try parseBuffered() {
                        if let ended = handle(operation) { return ended }
                    }
                } catch {
                    return error.description
                }
            }
            expireDue()
            if ContinuousClock.now >= nextPing {
                guard pingsOutstanding < options.maxPingsOutstanding else {
                    return "no PONG to \(pingsOutstanding) PINGs in a row: the server is unresponsive"
                }
                pingsOutstanding += 1
                connection.enqueueKeepAlivePing()
                nextPing = .now + options.pingInterval
            }
        }
    }

    /// Acts on one operation; returns a reason when it ends the connection.
    private func handle(_ operation: Incoming) -> String? {
        switch operation {
        case .message(let sid, let message):
            if sid == NATSConnection.inboxSID {
                connection.deliverReply(message)
            } else {
                connection.subscriptionHandler(sid)?(message)
            }
        case .ping:
            ClientCommand.pong(into: &writing)
        case .pong:
            pingsOutstanding = 0
            connection.pongReceived()
        case .info(let info):
            parser.limits.maxPayloadBytes = info.maxPayload
            connection.updateInfo(info, from: server)
            if info.lameDuckMode {
                logger.notice("NATS server entering lame-duck mode", ["server": .string(server.description)])
            }
        case .error(let text):
            // A permissions violation concerns one subject; the server keeps the connection.
            guard text.lowercased().contains("permissions violation") else { return "the server reported: \(text)" }
            logger.warning(
                "NATS permissions violation", ["server": .string(server.description), "error": .string(text)])
        case .ok, .skipped:
            break
        }
        return nil
    }

    /// Writes queued output until the socket would block; returns a reason if writing failed.
    /// Takes new output from the callers at most twice, so a fast producer cannot starve reading.
    func writePending() -> String? {
        var takes = 0
        while true {
            if written == writing.count {
                guard takes < 2 else { return nil }
                takes += 1
                writing.removeAll(keepingCapacity: true)
                written = 0
                connection.takeOutbound(into: &writing)
                if writing.isEmpty { return nil }
            }
            let result: IOResult<Int>
            do {
                let from = written
                result = try writing.withUnsafeBytes { raw throws(IOError) in
                    try Posix.send(socket, UnsafeRawBufferPointer(rebasing: raw[from...]))
                }
            } catch {
                return "\(error)"
            }
            switch result {
            case .processed(let count): written += count
            case .wouldBlock: return nil
            }
        }
    }

    /// Reads what the socket has; returns a reason when the connection has ended.
    func readSome() -> String? {
        let space = readBuffer.freeSpace()
        do {
            switch try Posix.read(socket, space) {
            case .processed(0): return "the server closed the connection"
            case .processed(let count): readBuffer.commit(count)
            case .wouldBlock: break
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The next complete operation in the read buffer, copied out and consumed; nil if none yet.
    func parseBuffered() throws(NATSError) -> Incoming? {
        let bytes = readBuffer.unread
        let (consumed, step) = parser.parse(bytes)
        switch step {
        case .needMore:
            return nil
        case .rejected(let violation):
            throw NATSError.protocolViolation(server: server.description, violation: violation)
        case .operation(let operation):
            let incoming = copy(operation, from: bytes)
            readBuffer.consume(consumed)
            return incoming
        }
    }

    private func copy(_ operation: ServerOperation, from bytes: UnsafeBufferPointer<UInt8>) -> Incoming {
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        switch operation {
        case .info(let json):
            return .info(ServerInfo(json: UnsafeBufferPointer(rebasing: bytes[json])) ?? ServerInfo())
        case .ping: return .ping
        case .pong: return .pong
        case .ok: return .ok
        case .error(let message): return .error(text(message))
        case .message(let frame):
            var headers = NATSHeaders()
            if let block = frame.headerBlock {
                do {
                    headers = try NATSHeaders.parse(UnsafeBufferPointer(rebasing: bytes[block]))
                } catch {
                    logger.warning(
                        "dropped a NATS message with malformed headers",
                        ["subject": .string(text(frame.subject)), "error": .string(error.description)])
                    return .skipped
                }
            }
            let message = NATSMessage(
                subject: text(frame.subject), replyTo: frame.replyTo.map(text), headers: headers,
                payload: Array(UnsafeBufferPointer(rebasing: bytes[frame.payload])))
            return .message(sid: frame.sid, message)
        }
    }

    /// Polls `fd` (if any) for `events` and the wake descriptor until `fd` is ready (true) or
    /// `deadline` passes (false), firing due request deadlines meanwhile; throws `closed` on close.
    func waitFor(_ fd: Int32?, events: Int16, until deadline: ContinuousClock.Instant) throws(NATSError) -> Bool {
        while true {
            guard !connection.isClosing else { throw NATSError.closed }
            expireDue()
            let now = ContinuousClock.now
            if now >= deadline { return false }
            var limit = deadline
            if let next = connection.nextDeadline(), next < limit { limit = next }
            var fds = [pollfd(fd: connection.wakeFD, events: Int16(POLLIN), revents: 0)]
            if let fd { fds.append(pollfd(fd: fd, events: events, revents: 0)) }
            do {
                _ = try Posix.poll(
                    &fds, timeoutMilliseconds: limit <= now ? 0 : Int32(clamping: (limit - now).milliseconds))
            } catch {
                throw NATSError.cannotConnect(attempts: ["\(server): \(error)"])
            }
            if fds[0].revents != 0 { Posix.drain(eventfd: connection.wakeFD) }
            if fds.count > 1 && fds[1].revents != 0 { return true }
        }
    }

    /// Fails requests, flushes and connect waiters whose deadline has passed.
    func expireDue() {
        connection.expireDue(now: .now)
    }
}
