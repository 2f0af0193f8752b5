extension Connection.StateMachine {
    /// Which timeout the next deadline enforces.
    enum Deadline: Equatable {
        case requestHead, body, idle, response, write, keepAlive, linger
    }

    /// The deadline that applies now, given the parser's progress and queued output; nil once closed.
    func deadline(_ timeouts: EventLoop.Timeouts, readingBody: Bool, midRequest: Bool, outputPending: Bool) -> (
        at: Duration, kind: Deadline
    )? {
        switch state {
        case .closed:
            return nil
        case .lingering:
            return (lingerSince + Self.lingerTimeout, .linger)
        case .closing:
            return (writeProgressAt + timeouts.writeTimeout, .write)
        case .streaming:
            // A subscriber that stops reading is cut off like any other reader.
            return outputPending
                ? (writeProgressAt + timeouts.writeTimeout, .write)
                : (writeProgressAt + timeouts.eventStreamKeepAliveInterval, .keepAlive)
        case .awaitingResponse:
            let response = dispatchedAt + timeouts.responseTimeout
            let write = writeProgressAt + timeouts.writeTimeout
            return outputPending && write < response ? (write, .write) : (response, .response)
        case .reading:
            let reading: (at: Duration, kind: Deadline)
            if readingBody {
                reading = (bodyProgressAt + timeouts.bodyTimeout, .body)
            } else if let idleSince, !midRequest {
                reading = (idleSince + timeouts.idleTimeout, .idle)
            } else {
                reading = (requestStartedAt + timeouts.requestHeadTimeout, .requestHead)
            }
            let write = writeProgressAt + timeouts.writeTimeout
            return outputPending && write < reading.at ? (write, .write) : reading
        }
    }
}
