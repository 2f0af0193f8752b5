import Posix
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
    // Every mutable property opts out of dynamic exclusivity checks: a connection is touched only on
    // its loop's thread, never re-entrantly, and the checks cost ~20 runtime calls per request (measured).
    @exclusivity(unchecked) var state = State.reading
    @exclusivity(unchecked) var parser: RequestParser
    /// Unparsed bytes of an incomplete request (empty most of the time).
    @exclusivity(unchecked) var inbound: [UInt8] = []
    /// Bytes at the front of `inbound` already parsed (dropped lazily: pipelined requests answered
    /// one by one would otherwise copy the rest of the buffer once per request).
    @exclusivity(unchecked) var inboundOffset = 0
    @exclusivity(unchecked) var output = OutputQueue()
    @exclusivity(unchecked) var isDirty = false
    @exclusivity(unchecked) var isProcessing = false
    /// The socket may hold input we stopped reading because a response was pending.
    @exclusivity(unchecked) var unreadInput = false
    @exclusivity(unchecked) var closeAfterFlush = false
    /// The peer has sent its FIN (EPOLLRDHUP): input ends after what is buffered.
    @exclusivity(unchecked) var peerFinished = false
    @exclusivity(unchecked) var keepAliveAfterResponse = true
    @exclusivity(unchecked) var currentIsHead = false
    @exclusivity(unchecked) var sentContinue = false
    /// Numbers requests so a late or duplicate answer is recognised and dropped.
    @exclusivity(unchecked) private(set) var requestNumber: UInt64 = 0

    @exclusivity(unchecked) var requestStartedAt: Duration = .zero
    @exclusivity(unchecked) var bodyProgressAt: Duration = .zero
    @exclusivity(unchecked) var idleSince: Duration? = nil
    @exclusivity(unchecked) var dispatchedAt: Duration = .zero
    @exclusivity(unchecked) var writeProgressAt: Duration = .zero
    @exclusivity(unchecked) var lingerSince: Duration = .zero

    @exclusivity(unchecked) var deadline: (at: Duration, kind: Deadline)? = nil
    @exclusivity(unchecked) var scheduledAt: Duration? = nil
    @exclusivity(unchecked) var stamp: UInt64 = 0

    static let lingerTimeout: Duration = .seconds(2)

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

    var configuration: EventLoop.Timeouts { loop.timeouts }

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
            // flush() runs the loop's beforeWrite hook first (once per iteration): output queued in an
            // earlier iteration's last write round may show what the hook must commit.
            flush()
        }
        if events.contains(.readHangUp) || events.contains(.hangUp) {
            // The peer's FIN is queued behind any data: read on to the end even after a short read.
            peerFinished = true
        }
        if events.contains(.readable) || peerFinished {
            readable()
        }
        refreshDeadline()
    }

    func readable() {
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
    func readRequests() {
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
                if count < buffer.count && !peerFinished {
                    // A short read emptied the socket; edge-triggered epoll reports new data.
                    unreadInput = false
                    return
                }
            }
        }
        unreadInput = true
    }

    /// Reads and drops input: streams and closing connections only watch for the peer leaving.
    func discardInput() {
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

    func ingest(_ bytes: UnsafeBufferPointer<UInt8>) {
        isProcessing = true
        defer { isProcessing = false }
        if !parser.isMidRequest && inbound.isEmpty {
            requestStartedAt = loop.now
            idleSince = nil
        }
        if inbound.isEmpty {
            let consumed = parseRequests(bytes)
            let keepsParsing: Bool
            switch state {
            case .reading, .awaitingResponse: keepsParsing = true
            default: keepsParsing = false
            }
            if consumed < bytes.count, keepsParsing {
                inbound = Array(UnsafeBufferPointer(rebasing: bytes[consumed...]))
            }
        } else {
            if inboundOffset > 0 {
                inbound.removeFirst(inboundOffset)
                inboundOffset = 0
            }
            inbound.append(contentsOf: bytes)
            parseInbound()
        }
        if parser.isReadingBody { bodyProgressAt = loop.now }
    }

    /// Parses the kept bytes (after more arrived, or after a pending response let parsing resume).
    func parseInbound() {
        let pending = inbound
        let start = inboundOffset
        let consumed = pending.withUnsafeBufferPointer { parseRequests(UnsafeBufferPointer(rebasing: $0[start...])) }
        if isClosed { return }
        if start + consumed == pending.count {
            inbound = []
            inboundOffset = 0
        } else {
            inboundOffset = start + consumed
        }
    }

    /// Feeds the parser until it needs more bytes or a request is in flight; returns bytes consumed.
    func parseRequests(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        while case .reading = state {
            let (consumed, step) = parser.parse(UnsafeBufferPointer(rebasing: bytes[offset...]))
            offset += consumed
            // Consumed: the request moves on to the responder without a copy.
            switch consume step {
            case .needMore:
                if parser.expectsContinue && !sentContinue {
                    sentContinue = true
                    queue(ResponseEncoder.continueResponse)
                }
                return offset
            case .request(let request):
                sentContinue = false
                dispatch(request)
            case .rejected(let rejection):
                reject(rejection)
                return offset
            }
        }
        return offset
    }

    func dispatch(_ request: consuming HTTPRequest) {
        request.peer = peer
        state = .awaitingResponse
        requestNumber &+= 1
        currentIsHead = request.method == .HEAD
        keepAliveAfterResponse = request.keepAlive && !loop.isShuttingDown
        dispatchedAt = loop.now
        let writer = HTTPResponseWriter(connection: self, number: requestNumber)
        loop.respond(to: request, writer: writer)
    }

    func reject(_ rejection: HTTPRejection) {
        if loop.logger.isEnabled(.debug) {
            loop.logger.debug("request rejected", ["status": .int(rejection.status.code), "reason": .string(rejection.message), "peer": .string(peer?.description ?? "?")])
        }
        queue(loop.responder.response(for: rejection), keepAlive: false, isHead: false)
        closeAfterFlush = true
        state = .closing
    }

    // MARK: answers (on the loop)

    /// Queues the answer to request `number`; drops answers to anything but the current request.
    func complete(_ response: HTTPResponse, number: UInt64) {
        guard case .awaitingResponse = state, number == requestNumber else { return }
        var keepAlive = keepAliveAfterResponse
        if let connection = response.headers["Connection"], headerValue(connection, contains: "close") { keepAlive = false }
        queue(response, keepAlive: keepAlive, isHead: currentIsHead)
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
    func resume() {
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
        inboundOffset = 0
        let head = ResponseEncoder.encodeStreamHead(headers: headers, date: loop.dateLine)
        stream.addQueued(head.count)
        queue(head)
        stream.attach()
        if loop.isShuttingDown {
            stream.connectionClosing(reason: "server shutting down")
            closeAfterFlush = true
        }
        if !isProcessing { refreshDeadline() }
    }

    /// Queues stream bytes moved out of the stream's buffer.
    func queueStream(_ chunk: [UInt8]) {
        guard case .streaming = state else { return }
        if output.isEmpty { writeProgressAt = loop.now }
        output.append(chunk)
        markDirty()
    }

    /// Closes the stream's connection once everything queued is written.
    func finishStream() {
        guard case .streaming = state else { return }
        closeAfterFlush = true
        markDirty()
    }

    func queue(_ response: HTTPResponse, keepAlive: Bool, isHead: Bool) {
        let (head, body) = ResponseEncoder.encode(response, date: loop.dateLine, keepAlive: keepAlive, isHead: isHead)
        queue(head)
        if let body { queue(body) }
    }

    func queue(_ bytes: [UInt8]) {
        if output.isEmpty { writeProgressAt = loop.now }
        output.append(bytes)
        markDirty()
    }

    func markDirty() {
        if !isDirty {
            isDirty = true
            loop.markDirty(self)
        }
    }
}
