import Logs
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted socket: its descriptor, buffers and syscalls. What happens on it is decided by its
/// `StateMachine`; the connection feeds it events and carries out the actions it returns. Owned by
/// its loop and touched only on the loop's thread; other threads reach it through `EventLoop.execute`.
final class Connection: @unchecked Sendable {
    let fd: Int32
    let slot: Int
    let generation: UInt32
    let peer: SocketAddress?
    let loop: EventLoop
    /// The peer's address as a number (nil for families other than IPv4 and IPv6), handed to each request.
    let peerIP: IPAddress?
    /// What the limiter decided (see `admission`): the address it counts under is `peerIP`, not stored twice.
    let admitted: Admitted

    /// How the limiter admitted a connection.
    enum Admitted {
        /// Served, counted in all only.
        case served
        /// Served, counted in all and under `peerIP`.
        case servedPerAddress
        /// Over a limit: answered 503 and closed.
        case refused
        /// Over a limit, closed without an answer (no connection is made for it).
        case dropped
    }
    // Every mutable property opts out of dynamic exclusivity checks: a connection is touched only on
    // its loop's thread, never re-entrantly, and the checks cost ~20 runtime calls per request (measured).
    @exclusivity(unchecked) var machine: StateMachine
    @exclusivity(unchecked) var parser: RequestParser
    /// The event stream this connection answers with, while it streams.
    @exclusivity(unchecked) var stream: ServerSentEventStream? = nil
    /// Unparsed bytes of an incomplete request (empty most of the time).
    @exclusivity(unchecked) var inbound: [UInt8] = []
    /// Bytes at the front of `inbound` already parsed (dropped lazily: pipelined requests answered
    /// one by one would otherwise copy the rest of the buffer once per request).
    @exclusivity(unchecked) var inboundOffset = 0
    @exclusivity(unchecked) var output = OutputQueue()
    /// What of `output` waits for the server's barrier (see `Connection+Durability`).
    @exclusivity(unchecked) var holds = DurabilityHolds()
    @exclusivity(unchecked) var isDirty = false
    @exclusivity(unchecked) var isProcessing = false
    /// The socket may hold input we stopped reading because a response was pending.
    @exclusivity(unchecked) var unreadInput = false
    /// The peer has sent its FIN (EPOLLRDHUP): input ends after what is buffered.
    @exclusivity(unchecked) var peerFinished = false

    /// The armed timer: when it fires and the stamp that identifies it.
    @exclusivity(unchecked) var scheduledAt: Duration? = nil
    @exclusivity(unchecked) var stamp: UInt64 = 0

    init(
        fd: Int32, slot: Int, peer: SocketAddress?, peerIP: IPAddress?, admission: ConnectionLimiter.Admission,
        loop: EventLoop
    ) {
        self.fd = fd
        self.slot = slot
        self.peer = peer
        self.peerIP = peerIP
        switch admission {
        case .served(let counted?) where counted == peerIP: admitted = .servedPerAddress
        case .served: admitted = .served
        case .refused: admitted = .refused
        case .dropped: admitted = .dropped
        }
        self.loop = loop
        self.parser = RequestParser(limits: loop.configuration.limits)
        self.machine = StateMachine(openedAt: loop.now)
        self.generation = loop.nextGeneration()
        holds.losable = loop.barrierLosesPositions
    }

    /// Which connection limits this connection counts against (released when it closes; no connection
    /// is made for a dropped one).
    var admission: ConnectionLimiter.Admission {
        switch admitted {
        case .served: .served(nil)
        case .servedPerAddress: .served(peerIP)
        case .refused: .refused
        case .dropped: .dropped
        }
    }

    /// The epoll token: slot and generation, so events for a recycled slot are recognised.
    var token: UInt64 { UInt64(generation) << 32 | UInt64(slot) }

    var isClosed: Bool { machine.state == .closed }

    /// Starts the connection's clock: its first request head is due within the head timeout.
    func opened() {
        refreshDeadline()
    }

    /// Answers at once with `refusal` and closes (the connection is over a limit).
    func refuse(_ refusal: StateMachine.Refusal) {
        perform(machine.refuseAtOpen(refusal))
        refreshDeadline()
    }

    // MARK: events

    func handle(_ events: Epoll.Events) {
        if events.contains(.error) {
            close(reason: "socket error")
            return
        }
        if events.contains(.writable) && !output.isEmpty {
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
        switch machine.readAction(queuedOutput: output.byteCount) {
        case .parse: readRequests()
        case .hold: holdInput()
        case .discard: discardInput()
        case .ignore: return
        }
    }

    /// Reads and parses until the socket is drained or parsing must wait (an answer is pending, or
    /// the peer is not reading what it is owed).
    func readRequests() {
        let buffer = loop.readBuffer
        while machine.readAction(queuedOutput: output.byteCount) == .parse {
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
                return peerClosed()
            case .processed(let count):
                ingest(
                    UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
                if count < buffer.count && !peerFinished {
                    // A short read emptied the socket; edge-triggered epoll reports new data.
                    unreadInput = false
                    return
                }
            }
        }
        if !isClosed { holdInput() }
    }

    /// Leaves input in the socket until parsing may go on (an answer is pending, or the peer is not
    /// reading what it is owed: then the flush that drains the output resumes it).
    func holdInput() {
        unreadInput = true
        if machine.state == .reading { logInputHeld() }
    }

    func logInputHeld() {
        if loop.logger.isEnabled(.trace) {
            loop.logger.trace(
                "input held: the peer is not reading what it is owed",
                ["queued_bytes": .int(output.byteCount), "peer": .string(peer?.description ?? "?")])
        }
    }

    /// Reads and drops input: streams and closing connections only watch for the peer leaving.
    /// `reads` bounds how many reads one call makes.
    func discardInput(atMost reads: Int = .max) {
        var left = reads
        while !isClosed && left > 0 {
            left -= 1
            let result: IOResult<Int>
            do {
                result = try Posix.read(fd, loop.readBuffer)
            } catch {
                close(reason: Self.describe(error))
                return
            }
            switch result {
            case .wouldBlock: return
            case .processed(0): return peerClosed()
            case .processed: continue
            }
        }
    }

    /// The peer's end of input.
    func peerClosed() {
        switch machine.peerClosed(outputPending: !output.isEmpty, midRequest: parser.isMidRequest || !inbound.isEmpty) {
        case .close(let reason): close(reason: reason.message(loop.timeouts))
        case .finishWriting: break
        }
    }

    func ingest(_ bytes: UnsafeBufferPointer<UInt8>) {
        isProcessing = true
        defer { isProcessing = false }
        machine.received(at: loop.now, startsRequest: !parser.isMidRequest && inbound.isEmpty, readingBody: false)
        if inbound.isEmpty {
            let consumed = parseRequests(bytes)
            if consumed < bytes.count, machine.state == .reading || machine.state == .awaitingResponse {
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
        if parser.isReadingBody { machine.received(at: loop.now, startsRequest: false, readingBody: true) }
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

    /// Feeds the parser until it needs more bytes or parsing must wait; returns bytes consumed.
    func parseRequests(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        while machine.readAction(queuedOutput: output.byteCount) == .parse {
            let (consumed, step) = parser.parse(UnsafeBufferPointer(rebasing: bytes[offset...]))
            offset += consumed
            // Consumed: the request moves on to the responder without a copy.
            switch consume step {
            case .needMore:
                if machine.parsed(.needMore(expectsContinue: parser.expectsContinue), at: loop.now) == .sendContinue {
                    queue(ResponseEncoder.continueResponse, dependingOn: 0)
                }
                return offset
            case .request(let request):
                let outcome = StateMachine.ParseOutcome.request(
                    keepAlive: request.keepAlive, isHead: request.method == .HEAD)
                guard case .dispatch(let number) = machine.parsed(outcome, at: loop.now) else { return offset }
                dispatch(request, number: number)
                if machine.state == .reading, output.byteCount > StateMachine.outputHighWater { logInputHeld() }
            case .rejected(let rejection):
                _ = machine.parsed(.rejected, at: loop.now)
                if loop.logger.isEnabled(.debug) {
                    loop.logger.debug(
                        "request rejected",
                        [
                            "status": .int(rejection.status.code), "reason": .string(rejection.message),
                            "peer": .string(peer?.description ?? "?"),
                        ])
                }
                queue(loop.responder.response(for: rejection), keepAlive: false, isHead: false, dependingOn: 0)
                return offset
            }
        }
        return offset
    }

    func dispatch(_ request: consuming HTTPRequest, number: UInt64) {
        request.setPeer(peer, ip: peerIP)
        let writer = HTTPResponseWriter(connection: self, number: number)
        loop.respond(to: request, writer: writer)
    }

    // MARK: answers (on the loop)

    /// Queues the answer to request `number`, written once `position` is durable (nil: everything
    /// appended so far), or replaced by a 503 when `refusable` and storing it fails; drops answers to
    /// anything but the current request.
    func complete(
        _ response: HTTPResponse, number: UInt64, dependingOn position: UInt64? = nil, refusable: Bool = false
    ) {
        guard
            case .write(let keepAlive, let isHead) = machine.answered(
                number: number, closeRequested: Self.closeRequested(response.headers), at: loop.now)
        else { return }
        queue(response, keepAlive: keepAlive, isHead: isHead, dependingOn: position, refusable: refusable)
        if !isProcessing {
            if keepAlive { resume() }
            refreshDeadline()
        }
    }

    /// As ``complete(_:number:dependingOn:refusable:)``, for an answer whose body is bytes the caller holds
    /// (on the loop, while the call lasts): encoded straight into the output queue, no array made for it.
    func complete(
        code: Int, headers: HTTPHeaders, body: UnsafeRawBufferPointer, number: UInt64, dependingOn position: UInt64?,
        refusable: Bool
    ) {
        guard
            case .write(let keepAlive, let isHead) = machine.answered(
                number: number, closeRequested: Self.closeRequested(headers), at: loop.now)
        else { return }
        if output.isEmpty { machine.wrote(at: loop.now) }
        let date = loop.dateLine
        let count = output.appendEncoded { out in
            ResponseEncoder.encode(
                code: code, headers: headers, body: body, date: date, keepAlive: keepAlive, isHead: isHead, into: &out)
        }
        hold(count, dependingOn: position, refusable: refusable)
        markDirty()
        if !isProcessing {
            if keepAlive { resume() }
            refreshDeadline()
        }
    }

    /// Whether an answer's headers ask to close the connection (`Connection: close`).
    @inline(__always)
    static func closeRequested(_ headers: HTTPHeaders) -> Bool {
        // Constant headers (most answers) hold no `Connection` field: no search by name.
        !headers.hasWireForm && (headers["Connection"].map { headerValue($0, contains: "close") } ?? false)
    }

    /// Continues with pipelined bytes and unread input after an asynchronous answer.
    func resume() {
        isProcessing = true
        if !inbound.isEmpty { parseInbound() }
        isProcessing = false
        if unreadInput, machine.readAction(queuedOutput: output.byteCount) == .parse { readRequests() }
    }

    /// Turns the answer to request `number` into an event stream.
    func startStream(_ stream: ServerSentEventStream, headers: HTTPHeaders, number: UInt64) {
        let action = machine.streamStarted(number: number)
        if action == .drop {
            return stream.connectionClosed(reason: "the request was already answered or its connection closed")
        }
        inbound = []
        inboundOffset = 0
        let head = ResponseEncoder.encodeStreamHead(headers: headers, date: loop.dateLine)
        switch action {
        case .drop:
            break
        case .headOnly:
            // HEAD: the head GET would get, then the end; the producer hears of it as a close.
            queue(head)
            stream.connectionClosed(reason: "a HEAD request gets no events")
        case .stream(let endNow):
            self.stream = stream
            stream.addQueued(head.count)
            // The head shows nothing stored: it must not wait for records that may never be written
            // (while storage fails, a stream would otherwise get no answer at all).
            queue(head, dependingOn: 0)
            stream.attach()
            if endNow { stream.connectionClosing(reason: "server shutting down") }
        }
        if !isProcessing { refreshDeadline() }
    }

    /// Queues stream bytes moved out of the stream's buffer, which show what `position` holds (nil:
    /// everything appended so far).
    func queueStream(_ chunk: [UInt8], dependingOn position: UInt64?) {
        guard machine.state == .streaming else { return }
        if output.isEmpty { machine.wrote(at: loop.now) }
        output.append(chunk)
        hold(chunk.count, dependingOn: position)
        markDirty()
    }

    /// Closes the stream's connection once everything queued is written.
    func finishStream() {
        if machine.streamFinished() { markDirty() }
    }

    func queue(
        _ response: HTTPResponse, keepAlive: Bool, isHead: Bool, dependingOn position: UInt64? = nil,
        refusable: Bool = false
    ) {
        if output.isEmpty { machine.wrote(at: loop.now) }
        var body: [UInt8]?
        let date = loop.dateLine
        // Encoded straight into the output queue (into the previous answer's buffer, when nothing waits).
        let count = output.appendEncoded { out in
            body = ResponseEncoder.encode(response, date: date, keepAlive: keepAlive, isHead: isHead, into: &out)
        }
        hold(count, dependingOn: position, refusable: refusable)
        markDirty()
        if let body { queue(body, dependingOn: position, refusable: refusable) }
    }

    /// Queues the responder's answer to `refusal` (with `Connection: close`).
    func queue(_ refusal: StateMachine.Refusal, isHead: Bool) {
        let rejection = refusal.rejection(loop.timeouts)
        if loop.logger.isEnabled(.debug) {
            loop.logger.debug(
                "request refused",
                [
                    "status": .int(rejection.status.code), "reason": .string(rejection.message),
                    "peer": .string(peer?.description ?? "?"),
                ])
        }
        // The server's own answers show nothing stored: they wait for nothing but earlier output.
        queue(loop.responder.response(for: rejection), keepAlive: false, isHead: isHead, dependingOn: 0)
    }

    /// Queues bytes that show what `position` holds (nil: everything appended so far).
    func queue(_ bytes: [UInt8], dependingOn position: UInt64? = nil, refusable: Bool = false) {
        if output.isEmpty { machine.wrote(at: loop.now) }
        output.append(bytes)
        hold(bytes.count, dependingOn: position, refusable: refusable)
        markDirty()
    }

    func markDirty() {
        if !isDirty {
            isDirty = true
            loop.markDirty(self)
        }
    }
}
