extension Connection {
    /// One connection's HTTP/1.1 exchange as a pure state machine: events in (a request parsed, an
    /// answer ready, output drained, a deadline passed, shutdown), actions out (`.dispatch`,
    /// `.write`, `.refuse`, `.halfClose`, `.close(reason)`, …). It knows no descriptor, clock or
    /// buffer: times come in with the events, and `Connection` carries the actions out with its
    /// syscalls. So every transition is tested as a table, without sockets.
    ///
    /// ```text
    /// reading ──request──▶ awaitingResponse ──answer, keep-alive──▶ reading
    ///    │                       ├──answer, close / refusal──▶ closing ──drained──▶ lingering ──▶ closed
    ///    └──rejected, timeout──▶ closing        └──event stream──▶ streaming ──ended──▶ closing
    /// ```
    struct StateMachine {
        enum State: Equatable {
            /// Parsing requests (and writing earlier responses).
            case reading
            /// A request was handed to the responder; later requests wait (responses stay in order).
            case awaitingResponse
            /// The response is an event stream; input is read only to notice the peer leaving.
            case streaming
            /// Writing the last response; nothing more is parsed.
            case closing
            /// Our side is shut down; input is read and dropped until the peer closes, so the kernel
            /// does not reset a response the peer has not read yet.
            case lingering
            case closed
        }

        private(set) var state = State.reading
        /// Numbers requests so a late or duplicate answer is recognised and dropped.
        private(set) var requestNumber: UInt64 = 0
        /// Whether the connection stays open after the current request's answer.
        private(set) var keepAlive = true
        /// The current request is a HEAD: its answer has no body.
        private(set) var isHead = false
        /// Once output is written, shut the write side down and linger.
        private(set) var closeAfterFlush = false
        private(set) var isShuttingDown = false
        private var sentContinue = false

        // The times the deadlines count from (see `deadline(_:readingBody:midRequest:outputPending:)`).
        private(set) var requestStartedAt: Duration
        private(set) var bodyProgressAt: Duration = .zero
        private(set) var idleSince: Duration? = nil
        private(set) var dispatchedAt: Duration = .zero
        private(set) var writeProgressAt: Duration = .zero
        private(set) var lingerSince: Duration = .zero

        /// How long a half-closed connection waits for the peer to close before closing itself.
        static let lingerTimeout: Duration = .seconds(2)
        /// Output beyond which no further request is parsed until the peer reads (a client that
        /// pipelines requests and never reads would otherwise make the server buffer every answer:
        /// slowhttptest's slow read, 10 pipelined requests on 10,000 connections, took 280 MiB at
        /// 256 KiB). One answer larger than this is still queued whole.
        static let outputHighWater = 16 * 1024

        /// A connection accepted at `now`: its first request head is due within the head timeout.
        init(openedAt now: Duration) {
            requestStartedAt = now
        }

        // MARK: input

        /// What to do with input the socket may hold.
        enum ReadAction: Equatable {
            /// Read and parse it.
            case parse
            /// Leave it in the socket: a response is pending or too much output is queued.
            case hold
            /// Read and drop it (streams, closing): only the peer leaving matters.
            case discard
            /// The connection is closed.
            case ignore
        }

        func readAction(queuedOutput: Int) -> ReadAction {
            switch state {
            case .reading: queuedOutput > Self.outputHighWater ? .hold : .parse
            case .awaitingResponse: .hold
            case .streaming, .closing, .lingering: .discard
            case .closed: .ignore
            }
        }

        /// Bytes of a request arrived at `now`; `startsRequest` when nothing of one was seen before.
        mutating func received(at now: Duration, startsRequest: Bool, readingBody: Bool) {
            if startsRequest {
                requestStartedAt = now
                idleSince = nil
            }
            if readingBody { bodyProgressAt = now }
        }

        /// What the parser made of the bytes it was given.
        enum ParseOutcome: Equatable {
            case needMore(expectsContinue: Bool)
            case request(keepAlive: Bool, isHead: Bool)
            case rejected
        }

        enum ParseAction: Equatable {
            /// Wait for more bytes.
            case readMore
            /// Send `100 Continue`, then wait for the body.
            case sendContinue
            /// Hand the request to the responder; its answer must carry `number`.
            case dispatch(number: UInt64)
            /// Answer the parser's rejection and close.
            case refuse
        }

        mutating func parsed(_ outcome: ParseOutcome, at now: Duration) -> ParseAction {
            switch outcome {
            case .needMore(let expectsContinue):
                guard expectsContinue && !sentContinue else { return .readMore }
                sentContinue = true
                return .sendContinue
            case .request(let keepAlive, let isHead):
                sentContinue = false
                state = .awaitingResponse
                requestNumber &+= 1
                self.isHead = isHead
                self.keepAlive = keepAlive && !isShuttingDown
                dispatchedAt = now
                return .dispatch(number: requestNumber)
            case .rejected:
                state = .closing
                closeAfterFlush = true
                return .refuse
            }
        }

        // MARK: answers

        enum AnswerAction: Equatable {
            /// Not the current request's answer (late, duplicate, or the connection moved on).
            case drop
            /// Write it; with `keepAlive` parsing resumes, else the connection closes after it.
            case write(keepAlive: Bool, isHead: Bool)
        }

        /// The answer to request `number` is ready; `closeRequested` when it says `Connection: close`.
        mutating func answered(number: UInt64, closeRequested: Bool, at now: Duration) -> AnswerAction {
            guard state == .awaitingResponse, number == requestNumber else { return .drop }
            let keepAlive = keepAlive && !closeRequested
            requestStartedAt = now
            if keepAlive {
                idleSince = now
                state = .reading
            } else {
                state = .closing
                closeAfterFlush = true
            }
            return .write(keepAlive: keepAlive, isHead: isHead)
        }

        enum StreamAction: Equatable {
            /// Not the current request: end the stream at once.
            case drop
            /// Write the stream head and stream; `endNow` when the server is shutting down.
            case stream(endNow: Bool)
            /// A HEAD request: write the head a GET would get, no events, then close.
            case headOnly
        }

        /// The answer to request `number` is an event stream.
        mutating func streamStarted(number: UInt64) -> StreamAction {
            guard state == .awaitingResponse, number == requestNumber else { return .drop }
            if isHead {
                state = .closing
                closeAfterFlush = true
                return .headOnly
            }
            state = .streaming
            if isShuttingDown { closeAfterFlush = true }
            return .stream(endNow: isShuttingDown)
        }

        /// The stream's producer closed it: close once its events are written. False when not streaming.
        mutating func streamFinished() -> Bool {
            guard state == .streaming else { return false }
            closeAfterFlush = true
            return true
        }

        // MARK: output

        /// Output was queued on an empty queue, or some of it was written.
        mutating func wrote(at now: Duration) {
            writeProgressAt = now
        }

        enum DrainAction: Equatable {
            case none
            /// Shut the write side down and linger; `endingStream` when that ends an event stream.
            case halfClose(endingStream: Bool)
        }

        /// Every queued byte is written.
        mutating func outputDrained(at now: Duration) -> DrainAction {
            guard closeAfterFlush, state != .closed else { return .none }
            let wasStreaming = state == .streaming
            closeAfterFlush = false
            state = .lingering
            lingerSince = now
            return .halfClose(endingStream: wasStreaming)
        }

        enum PeerClosedAction: Equatable {
            case close(CloseReason)
            /// The peer sent all it will; write what it is owed, then close.
            case finishWriting
        }

        /// The peer's end of input (a read returned 0).
        mutating func peerClosed(outputPending: Bool, midRequest: Bool) -> PeerClosedAction {
            switch state {
            case .awaitingResponse:
                keepAlive = false
                return .finishWriting
            case .reading where outputPending:
                state = .closing
                closeAfterFlush = true
                return .finishWriting
            case .reading: return .close(midRequest ? .peerClosedMidRequest : .peerClosed)
            case .streaming: return .close(.peerClosedStream)
            case .closing: return .close(.peerClosedBeforeReading)
            case .lingering, .closed: return .close(.lastResponseRead)
            }
        }

        // MARK: time

        enum TimeoutAction: Equatable {
            /// Nothing is due yet (the deadline moved since it was armed).
            case none
            /// A quiet stream gets its `: keep-alive` comment.
            case sendKeepAlive
            /// Answer with the refusal (a HEAD answer has no body), then close.
            case refuse(Refusal, isHead: Bool)
            case close(CloseReason)
        }

        /// The deadline of `kind` passed; `outputHeld` when output waits for the barrier (its write
        /// deadline then means it never became durable).
        mutating func deadlinePassed(_ kind: Deadline, midRequest: Bool, outputPending: Bool, outputHeld: Bool = false)
            -> TimeoutAction
        {
            switch kind {
            case .keepAlive:
                return state == .streaming && !outputPending ? .sendKeepAlive : .none
            case .requestHead, .body:
                // Refused with a 408 only when the client is owed nothing else and has started a
                // request; a connection that never sent a byte is closed quietly (RFC 9110 §15.5.9).
                guard !outputPending, midRequest else { return .close(kind == .body ? .bodyTimeout : .headTimeout) }
                state = .closing
                closeAfterFlush = true
                return .refuse(kind == .body ? .bodyTimeout : .headTimeout, isHead: false)
            case .response:
                guard state == .awaitingResponse else { return .none }
                state = .closing
                closeAfterFlush = true
                return .refuse(.responseTimeout, isHead: isHead)
            case .idle: return .close(.idle)
            case .write: return .close(outputHeld ? .outputNotDurable : .peerNotReading)
            case .linger: return .close(.lastResponseRead)
            }
        }

        enum ShutdownAction: Equatable {
            /// Let the request in progress finish; the connection closes after its answer.
            case none
            /// Write what the peer is owed, then close.
            case finishWriting
            /// End the event stream after what is queued.
            case endStream
            case close(CloseReason)
        }

        /// The server began a graceful shutdown: idle connections close now, busy ones after their answer.
        mutating func shutdownBegan(midRequest: Bool, outputPending: Bool) -> ShutdownAction {
            isShuttingDown = true
            switch state {
            case .reading where midRequest:
                return .none
            case .reading where outputPending:
                state = .closing
                closeAfterFlush = true
                return .finishWriting
            case .reading:
                return .close(.shutdown)
            case .awaitingResponse:
                keepAlive = false
                return .none
            case .streaming:
                closeAfterFlush = true
                return .endStream
            case .closing, .lingering, .closed:
                return .none
            }
        }

        enum ShutdownDeadlineAction: Equatable {
            /// Write the refusal (a HEAD answer has no body) as the last bytes, then close at once.
            case refuseAndClose(Refusal, isHead: Bool)
            case close(CloseReason)
        }

        /// The shutdown deadline passed: whoever still waits for an answer gets a 503; all close now.
        mutating func shutdownDeadlinePassed(midRequest: Bool, outputPending: Bool) -> ShutdownDeadlineAction {
            let waiting = state == .awaitingResponse || (state == .reading && midRequest && !outputPending)
            let head = state == .awaitingResponse && isHead
            state = .closing
            return waiting ? .refuseAndClose(.shuttingDown, isHead: head) : .close(.shutdownDeadline)
        }

        /// Refuses a connection as it opens (over a connection limit): the answer is written, then it closes.
        mutating func refuseAtOpen(_ refusal: Refusal) -> TimeoutAction {
            state = .closing
            closeAfterFlush = true
            return .refuse(refusal, isHead: false)
        }

        /// An answer held for durability was refused (its records were not stored): the refusal is
        /// the connection's last answer. False while streaming: the stream then just ends.
        mutating func heldAnswerRefused() -> Bool {
            guard state != .streaming else { return false }
            state = .closing
            closeAfterFlush = true
            return true
        }

        /// The connection is closed; nothing more happens to it.
        mutating func closed() {
            state = .closed
        }
    }
}
