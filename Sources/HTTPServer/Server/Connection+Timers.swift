import Logs

/// Timers: the machine says which deadline applies; the connection arms one timer entry for it.
extension Connection {
    /// The deadline that applies now, from the machine.
    var currentDeadline: (at: Duration, kind: StateMachine.Deadline)? {
        machine.deadline(
            loop.timeouts, readingBody: parser.isReadingBody, midRequest: parser.isMidRequest || !inbound.isEmpty,
            outputPending: !output.isEmpty)
    }

    /// Works out which deadline applies now and arms it (only ever earlier: a later deadline is
    /// found when the armed one fires).
    func refreshDeadline() {
        guard let next = currentDeadline else { return }
        if scheduledAt == nil || next.at < scheduledAt! {
            stamp &+= 1
            scheduledAt = next.at
            loop.schedule(self, at: next.at, stamp: stamp)
        }
    }

    func timerFired(_ entry: TimerHeap.Entry) {
        guard entry.stamp == stamp, !isClosed else { return }
        scheduledAt = nil
        // Worked out afresh: a stream's writes only move its deadline later, so they leave the
        // timer early (see `writeStream`) and it is re-armed here.
        guard let deadline = currentDeadline else { return }
        if deadline.at > loop.now {
            stamp &+= 1
            scheduledAt = deadline.at
            loop.schedule(self, at: deadline.at, stamp: stamp)
            return
        }
        if deadline.kind == .response {
            loop.logger.warning(
                "responder did not answer in time",
                ["timeout_ms": .int(Int(loop.timeouts.responseTimeout.milliseconds))])
        }
        if deadline.kind == .write, holds.held > 0 {
            loop.logger.warning(
                "closed a connection whose answer was held for durability too long",
                ["timeout_ms": .int(Int(loop.timeouts.writeTimeout.milliseconds))])
        }
        perform(
            machine.deadlinePassed(
                deadline.kind, midRequest: parser.isMidRequest || !inbound.isEmpty, outputPending: !output.isEmpty,
                outputHeld: holds.held > 0))
        refreshDeadline()
    }

    /// Carries out what the machine decided when a deadline passed (or a connection was refused).
    func perform(_ action: StateMachine.TimeoutAction) {
        switch action {
        case .none:
            break
        case .sendKeepAlive:
            let bytes = EncodedServerSentEvent.keepAlive.bytes
            stream?.addQueued(bytes.count)
            // A comment shows nothing stored: it waits only for what was queued before it.
            queue(bytes, dependingOn: 0)
        case .refuse(let refusal, let isHead):
            queue(refusal, isHead: isHead)
        case .close(let reason):
            if loop.logger.isEnabled(.debug), reason == .headTimeout || reason == .bodyTimeout || reason == .idle {
                loop.logger.debug(
                    "connection timed out",
                    ["reason": .string(reason.message(loop.timeouts)), "peer": .string(peer?.description ?? "?")])
            }
            close(reason: reason.message(loop.timeouts))
        }
    }
}
