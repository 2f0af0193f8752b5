import Logs

/// Timers: each state has one deadline (head, body, idle, response, write, keep-alive, linger).
extension Connection {
    /// Works out which deadline applies now and arms it.
    func refreshDeadline() {
        updateDeadline()
        guard let next = deadline else { return }
        if scheduledAt == nil || next.at < scheduledAt! {
            stamp &+= 1
            scheduledAt = next.at
            loop.schedule(self, at: next.at, stamp: stamp)
        }
    }

    /// Works out which deadline applies now, without arming it.
    func updateDeadline() {
        let c = loop.timeouts
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
            if output.isEmpty {
                consider(writeProgressAt + c.eventStreamKeepAliveInterval, .keepAlive)
            } else {
                // A subscriber that stops reading is cut off like any other reader; its
                // producer gets `.closed` and the buffered events are freed.
                consider(writeProgressAt + c.writeTimeout, .write)
            }
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
    }

    func timerFired(_ entry: TimerHeap.Entry) {
        guard entry.stamp == stamp, !isClosed else { return }
        scheduledAt = nil
        // Worked out afresh: a stream's writes only move its deadline later, so they leave the
        // timer early (see `writeStream`) and it is re-armed here.
        updateDeadline()
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
            close(reason: "peer did not read for \(c(configuration.writeTimeout))")
        case .linger:
            close(reason: "closed after the last response")
        }
        refreshDeadline()
    }

    func c(_ duration: Duration) -> String { "\(duration.milliseconds) ms" }

    /// Answers a timed-out request with `status` when nothing else is being written, then closes.
    func timedOut(_ reason: String, status: Int) {
        if loop.logger.isEnabled(.debug) {
            loop.logger.debug("connection timed out", ["reason": .string(reason), "peer": .string(peer?.description ?? "?")])
        }
        if output.isEmpty, parser.isMidRequest {
            queue(HTTPResponse(status: HTTPStatus(code: status), text: reason + "\n"), keepAlive: false, isHead: false)
            closeAfterFlush = true
            state = .closing
        } else {
            close(reason: reason)
        }
    }
}
