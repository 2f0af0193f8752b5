extension Connection.StateMachine {
    /// An answer the server gives by itself, through the responder's `response(for:)`.
    enum Refusal: Equatable {
        case headTimeout, bodyTimeout, responseTimeout, shuttingDown, tooManyConnections

        /// The rejection the responder renders, with a message naming the limit.
        func rejection(_ timeouts: EventLoop.Timeouts) -> HTTPRejection {
            switch self {
            case .headTimeout:
                HTTPRejection(
                    .requestTimeout,
                    "the request head was not complete within \(timeouts.requestHeadTimeout.milliseconds) ms")
            case .bodyTimeout:
                HTTPRejection(.requestTimeout, "the request body stalled for \(timeouts.bodyTimeout.milliseconds) ms")
            case .responseTimeout:
                HTTPRejection(
                    .responseTimeout, "the server did not answer within \(timeouts.responseTimeout.milliseconds) ms")
            case .shuttingDown:
                HTTPRejection(.shuttingDown, "the server is shutting down and could not finish this request")
            case .tooManyConnections:
                HTTPRejection(.tooManyConnections, "the server holds as many connections as it may; try again later")
            }
        }
    }

    /// Why a connection ends, for the trace log.
    enum CloseReason: Equatable {
        case peerClosed, peerClosedMidRequest, peerClosedStream, peerClosedBeforeReading
        case lastResponseRead, idle, headTimeout, bodyTimeout, peerNotReading, shutdown, shutdownDeadline
        /// What the output showed did not become durable in time: it is never sent.
        case outputNotDurable

        /// The reason in words, naming the limit that ended the connection.
        func message(_ timeouts: EventLoop.Timeouts) -> String {
            switch self {
            case .peerClosed: "peer closed"
            case .peerClosedMidRequest: "peer closed mid-request"
            case .peerClosedStream: "peer closed the stream"
            case .peerClosedBeforeReading: "peer closed before reading the response"
            case .lastResponseRead: "closed after the last response"
            case .idle: "idle for \(timeouts.idleTimeout.milliseconds) ms"
            case .headTimeout: "request head not complete within \(timeouts.requestHeadTimeout.milliseconds) ms"
            case .bodyTimeout: "request body stalled for \(timeouts.bodyTimeout.milliseconds) ms"
            case .peerNotReading: "peer did not read for \(timeouts.writeTimeout.milliseconds) ms"
            case .shutdown: "server shutting down"
            case .shutdownDeadline: "server shutdown deadline passed"
            case .outputNotDurable:
                "what the answer shows was not stored within \(timeouts.writeTimeout.milliseconds) ms; it was not sent"
            }
        }
    }
}
