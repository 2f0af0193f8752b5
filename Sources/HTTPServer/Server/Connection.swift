import Logs
#if canImport(Glibc)
import Glibc
#endif

/// One accepted socket and its HTTP/1.1 exchange. Owned by its loop and touched only on the
/// loop's thread; other threads reach it through `EventLoop.execute`.
final class Connection: @unchecked Sendable {
    enum State {
        /// Parsing requests (and writing earlier responses).
        case reading
        /// A request was handed to the responder; later requests wait (responses stay in order).
        case awaitingResponse
        /// The response is an event stream; input is read only to notice the peer leaving.
        case streaming(ServerSentEventStream)
        /// Writing the last response; nothing more is parsed.
        case closing
        /// Our side is shut down; reading and discarding until the peer closes, so the kernel
        /// does not reset a response the peer has not read yet.
        case lingering
        case closed
    }

    /// Which timeout the armed deadline enforces.
    enum Deadline {
        case requestHead, body, idle, response, write, keepAlive, linger
    }

    let fd: Int32
    let slot: Int
    let generation: UInt32
    let peer: SocketAddress?
    let loop: EventLoop
    private(set) var state = State.reading
    private var parser: RequestParser
    /// Unparsed bytes of an incomplete request (empty most of the time).
    private var inbound: [UInt8] = []
    private var output = OutputQueue()
    private var isDirty = false
    private var isProcessing = false
    /// The socket may hold input we stopped reading because a response was pending.
    private var unreadInput = false
    private var closeAfterFlush = false
    private var keepAliveAfterResponse = true
    private var currentIsHead = false
    private var sentContinue = false
    /// Numbers requests so a late or duplicate answer is recognised and dropped.
    private(set) var requestNumber: UInt64 = 0

    private var requestStartedAt: Duration = .zero
    private var bodyProgressAt: Duration = .zero
    private var idleSince: Duration? = nil
    private var dispatchedAt: Duration = .zero
    private var writeProgressAt: Duration = .zero
    private var lingerSince: Duration = .zero

    private var deadline: (at: Duration, kind: Deadline)? = nil
    private var scheduledAt: Duration? = nil
    private var stamp: UInt64 = 0

    private static let lingerTimeout: Duration = .seconds(2)

    init(fd: Int32, slot: Int, peer: SocketAddress?, loop: EventLoop) {
        self.fd = fd
        self.slot = slot
        self.peer = peer
        self.loop = loop
        self.parser = RequestParser(limits: loop.configuration.limits)
        self.generation = loop.nextGeneration()
    }

    /// The epoll token: slot and generation, so events for a recycled slot are recognised.
    var token: UInt64 { UInt64(generation) << 32 | UInt64(slot) }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    private var configuration: HTTPServer.Configuration { loop.configuration }

    func opened() {
        requestStartedAt = loop.now
        refreshDeadline()
    }

    // MARK: events

    func handle(_ events: Epoll.Events) {
        if events.contains(.error) {
            close(reason: "socket error")
            return
        }
        if events.contains(.writable) && !output.isEmpty {
            // Output queued in an earlier iteration may show what the hook must commit first (it
            // was queued after that iteration's hook ran, in its last write round).
            configuration.beforeWrite?(loop.index)
            flush()
        }
        if events.contains(.readable) || events.contains(.readHangUp) || events.contains(.hangUp) {
            readable()
        }
        refreshDeadline()
    }

    private func readable() {
        switch state {
        case .closed:
            return
        case .reading:
            readRequests()
        case .awaitingResponse:
            unreadInput = true
        case .streaming, .closing, .lingering:
            discardInput()
        }
    }

    /// Reads and parses until the socket is drained or a request is waiting for its response.
    private func readRequests() {
        let buffer = loop.readBuffer
        while case .reading = state {
            let result: IOResult<Int>
            do {
                result = try Posix.read(fd, buffer)
            } catch {
                close(reason: Self.describe(error))
                return
            }
            switch result {
            case .wouldBlock:
                unreadInput = false
                return
            case .processed(0):
                if output.isEmpty {
                    close(reason: parser.isMidRequest || !inbound.isEmpty ? "peer closed mid-request" : "peer closed")
                } else {
                    // The peer is done sending but may still read what we owe it.
                    closeAfterFlush = true
                    state = .closing
                }
                return
            case .processed(let count):
                ingest(UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
                if count < buffer.count {
                    // A short read emptied the socket; edge-triggered epoll reports new data.
                    unreadInput = false
                    return
                }
            }
        }
        unreadInput = true
    }

    /// Reads and drops input: streams and closing connections only watch for the peer leaving.
    private func discardInput() {
        while !isClosed {
            let result: IOResult<Int>
            do {
                result = try Posix.read(fd, loop.readBuffer)
            } catch {
                close(reason: Self.describe(error))
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .processed(0):
                if case .lingering = state {
                    close(reason: "closed after the last response")
                } else if case .streaming = state {
                    close(reason: "peer closed the stream")
                } else {
                    close(reason: "peer closed before reading the response")
                }
                return
            case .processed:
                continue
            }
        }
    }

    private func ingest(_ bytes: UnsafeBufferPointer<UInt8>) {
        isProcessing = true
        defer { isProcessing = false }
        if !parser.isMidRequest && inbound.isEmpty {
            requestStartedAt = loop.now
            idleSince = nil
        }
        if inbound.isEmpty {
            let consumed = parseRequests(bytes)
            if consumed < bytes.count, !isClosed {
                inbound = Array(UnsafeBufferPointer(rebasing: bytes[consumed...]))
            }
        } else {
            inbound.append(contentsOf: bytes)
            parseInbound()
        }
        if parser.isReadingBody { bodyProgressAt = loop.now }
    }

    /// Parses the kept bytes (after more arrived, or after a pending response let parsing resume).
    private func parseInbound() {
        let pending = inbound
        let consumed = pending.withUnsafeBufferPointer { parseRequests($0) }
        if isClosed { return }
        if consumed == pending.count {
            inbound = []
        } else if consumed > 0 {
            inbound = Array(pending[consumed...])
        }
    }

    /// Feeds the parser until it needs more bytes or a request is in flight; returns bytes consumed.
    private func parseRequests(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        while case .reading = state {
            let (consumed, step) = parser.parse(UnsafeBufferPointer(rebasing: bytes[offset...]))
            offset += consumed
            switch step {
            case .needMore:
                if parser.expectsContinue && !sentContinue {
                    sentContinue = true
                    queue(ResponseEncoder.continueResponse)
                }
                return offset
            case .request(var request):
                sentContinue = false
                request.peer = peer
                dispatch(request)
            case .rejected(let rejection):
                reject(rejection)
                return offset
            }
        }
        return offset
    }

    private func dispatch(_ request: HTTPRequest) {
        state = .awaitingResponse
        requestNumber &+= 1
        currentIsHead = request.method == .HEAD
        keepAliveAfterResponse = request.keepAlive && !loop.isShuttingDown
        dispatchedAt = loop.now
        let writer = HTTPResponseWriter(connection: self, number: requestNumber)
        loop.responder.respond(to: request, writer: writer)
    }

    private func reject(_ rejection: HTTPRejection) {
        if loop.logger.isEnabled(.debug) {
            loop.logger.debug("request rejected", ["status": .int(rejection.status.code), "reason": .string(rejection.message), "peer": .string(peer?.description ?? "?")])
        }
        let response = loop.responder.response(for: rejection)
        queue(ResponseEncoder.encode(response, date: loop.dateLine, keepAlive: false, isHead: false))
        closeAfterFlush = true
        state = .closing
    }

    // MARK: answers (on the loop)

    /// Queues the answer to request `number`; drops answers to anything but the current request.
    func complete(_ response: HTTPResponse, number: UInt64) {
        guard case .awaitingResponse = state, number == requestNumber else { return }
        var keepAlive = keepAliveAfterResponse
        if let connection = response.headers["Connection"], headerValue(connection, contains: "close") { keepAlive = false }
        queue(ResponseEncoder.encode(response, date: loop.dateLine, keepAlive: keepAlive, isHead: currentIsHead))
        requestStartedAt = loop.now
        if keepAlive {
            idleSince = loop.now
            state = .reading
            if !isProcessing { resume() }
        } else {
            closeAfterFlush = true
            state = .closing
        }
        if !isProcessing { refreshDeadline() }
    }

    /// Continues with pipelined bytes and unread input after an asynchronous answer.
    private func resume() {
        isProcessing = true
        if !inbound.isEmpty { parseInbound() }
        isProcessing = false
        if case .reading = state, unreadInput { readRequests() }
    }

    /// Turns the response to request `number` into an event stream.
    func startStream(_ stream: ServerSentEventStream, headers: HTTPHeaders, number: UInt64) {
        guard case .awaitingResponse = state, number == requestNumber else {
            stream.connectionClosed(reason: "the request was already answered or its connection closed")
            return
        }
        state = .streaming(stream)
        inbound = []
        let head = ResponseEncoder.encodeStreamHead(headers: headers, date: loop.dateLine)
        stream.addQueued(head.count)
        queue(head)
        stream.moveOutput()
        if loop.isShuttingDown {
            stream.connectionClosing(reason: "server shutting down")
            closeAfterFlush = true
        }
        if !isProcessing { refreshDeadline() }
    }

    /// Queues stream bytes moved out of the stream's buffer; `finish` closes after writing them.
    func queueStream(_ chunks: [[UInt8]], finish: Bool) {
        guard case .streaming = state else { return }
        if output.isEmpty { writeProgressAt = loop.now }
        output.append(contentsOf: chunks)
        markDirty()
        if finish { closeAfterFlush = true }
    }

    private func queue(_ bytes: [UInt8]) {
        if output.isEmpty { writeProgressAt = loop.now }
        output.append(bytes)
        markDirty()
    }

    private func markDirty() {
        if !isDirty {
            isDirty = true
            loop.markDirty(self)
        }
    }

    // MARK: writing

    /// Writes queued output until done or the socket is full (then EPOLLOUT resumes it).
    func flush() {
        isDirty = false
        if isClosed { return }
        while !output.isEmpty {
            let result: IOResult<Int>
            do {
                result = try output.write(to: fd)
            } catch {
                close(reason: Self.describe(error))
                return
            }
            guard case .processed(let written) = result else {
                refreshDeadline()
                return
            }
            writeProgressAt = loop.now
            if case .streaming(let stream) = state { stream.didWrite(written) }
        }
        if case .streaming(let stream) = state {
            output.removeAll(release: true)
            stream.outputDrained()
            if isClosed || !output.isEmpty { return }
        }
        if closeAfterFlush {
            closeAfterFlush = false
            output.removeAll(release: true)
            if case .streaming(let stream) = state { stream.connectionClosing(reason: "closed") }
            // Half-close, then read until the peer closes: closing with unread input would
            // reset the connection and could destroy the response before the peer reads it.
            _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            state = .lingering
            lingerSince = loop.now
            discardInput()
        }
        refreshDeadline()
    }

    // MARK: timers

    /// Works out which deadline applies now and arms it.
    func refreshDeadline() {
        let c = configuration
        var next: (at: Duration, kind: Deadline)?
        func consider(_ at: Duration, _ kind: Deadline) {
            if next == nil || at < next!.at { next = (at, kind) }
        }
        switch state {
        case .closed:
            return
        case .lingering:
            consider(lingerSince + Self.lingerTimeout, .linger)
        case .closing:
            consider(writeProgressAt + c.writeTimeout, .write)
        case .streaming:
            consider(writeProgressAt + c.eventStreamKeepAliveInterval, .keepAlive)
        case .awaitingResponse:
            consider(dispatchedAt + c.responseTimeout, .response)
            if !output.isEmpty { consider(writeProgressAt + c.writeTimeout, .write) }
        case .reading:
            if !output.isEmpty { consider(writeProgressAt + c.writeTimeout, .write) }
            if parser.isReadingBody {
                consider(bodyProgressAt + c.bodyTimeout, .body)
            } else if let idleSince, !parser.isMidRequest && inbound.isEmpty {
                consider(idleSince + c.idleTimeout, .idle)
            } else {
                consider(requestStartedAt + c.requestHeadTimeout, .requestHead)
            }
        }
        deadline = next
        guard let next else { return }
        if scheduledAt == nil || next.at < scheduledAt! {
            stamp &+= 1
            scheduledAt = next.at
            loop.schedule(self, at: next.at, stamp: stamp)
        }
    }

    func timerFired(_ entry: TimerHeap.Entry) {
        guard entry.stamp == stamp, !isClosed else { return }
        scheduledAt = nil
        guard let deadline else { return }
        if deadline.at > loop.now {
            stamp &+= 1
            scheduledAt = deadline.at
            loop.schedule(self, at: deadline.at, stamp: stamp)
            return
        }
        self.deadline = nil
        switch deadline.kind {
        case .keepAlive:
            if case .streaming(let stream) = state, output.isEmpty {
                let bytes = EncodedServerSentEvent.keepAlive.bytes
                stream.addQueued(bytes.count)
                queue(bytes)
            }
            writeProgressAt = loop.now
        case .requestHead:
            timedOut("request head not complete within \(c(configuration.requestHeadTimeout))", status: 408)
        case .body:
            timedOut("request body stalled for \(c(configuration.bodyTimeout))", status: 408)
        case .response:
            loop.logger.warning("responder did not answer in time", ["timeout_ms": .int(Int(configuration.responseTimeout.milliseconds))])
            keepAliveAfterResponse = false
            complete(HTTPResponse(status: 503, text: "The server did not answer in time.\n"), number: requestNumber)
        case .idle:
            close(reason: "idle for \(c(configuration.idleTimeout))")
        case .write:
            close(reason: "peer did not read its response for \(c(configuration.writeTimeout))")
        case .linger:
            close(reason: "closed after the last response")
        }
        refreshDeadline()
    }

    private func c(_ duration: Duration) -> String { "\(duration.milliseconds) ms" }

    /// Answers a timed-out request with `status` when nothing else is being written, then closes.
    private func timedOut(_ reason: String, status: Int) {
        if loop.logger.isEnabled(.debug) {
            loop.logger.debug("connection timed out", ["reason": .string(reason), "peer": .string(peer?.description ?? "?")])
        }
        if output.isEmpty, parser.isMidRequest {
            queue(ResponseEncoder.encode(HTTPResponse(status: HTTPStatus(code: status), text: reason + "\n"), date: loop.dateLine, keepAlive: false, isHead: false))
            closeAfterFlush = true
            state = .closing
        } else {
            close(reason: reason)
        }
    }

    // MARK: ending

    /// Server shutdown: idle connections close now; busy ones after their current response.
    func shutdown() {
        switch state {
        case .reading:
            if !parser.isMidRequest && inbound.isEmpty {
                if output.isEmpty {
                    close(reason: "server shutting down")
                } else {
                    closeAfterFlush = true
                    state = .closing
                }
            }
        case .awaitingResponse:
            keepAliveAfterResponse = false
        case .streaming(let stream):
            stream.connectionClosing(reason: "server shutting down")
            closeAfterFlush = true
            if output.isEmpty { flush() }
        case .closing, .lingering, .closed:
            break
        }
    }

    func close(reason: String) {
        let previous = state
        if case .closed = previous { return }
        state = .closed
        Posix.close(fd)
        loop.remove(self)
        output.removeAll(release: true)
        if !isProcessing { inbound = [] }
        if case .streaming(let stream) = previous { stream.connectionClosed(reason: reason) }
        if loop.logger.isEnabled(.trace) {
            loop.logger.trace("connection closed", ["reason": .string(reason), "peer": .string(peer?.description ?? "?")])
        }
    }

    private static func describe(_ error: IOError) -> String {
        switch error.errno {
        case ECONNRESET: "connection reset by peer"
        case EPIPE: "peer closed the connection"
        default: error.description
        }
    }
}
