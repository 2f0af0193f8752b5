import Dispatch
import JSONCodec
import NATS

// Hand-off: an instance that gets a request for a session a live instance runs asks that instance
// for it (request/reply on `<prefix>.handoff.<instance>`). The owner journals a final snapshot, sends
// its subscribers to reconnect (`session_moved`), waits for its last records and gives the claim up;
// only then does it answer, so the asking instance's claim and fence come after everything it wrote.
// This file is the owner's side; the asking side is ``NATSHandOffRequests``.

/// What a hand-off request came to, as the asking instance sees it (the owner answers the first two).
enum HandOffReply: Equatable {
    /// The owner let the session go (or did not have it): claim it again.
    case released
    /// The owner keeps it for now; why.
    case refused(String)
    /// Nothing listens for the owner's hand-off requests on the cluster: its connection is gone
    /// (the process died, or it is cut off from NATS and so can store nothing).
    case ownerGone
    /// The owner did not answer in time (paused, overloaded): not asked again for a moment.
    case silent(String)
}

extension NATSStorage.Options {
    /// How long an instance that just handed a session off refuses to load it back: requests that
    /// were on their way to it when the session moved are sent on (503) instead of pulling it back.
    var handOffQuarantine: Duration { min(claimTTL, .seconds(2)) }

    /// What the owner may spend letting a session go: settling its effects takes at most half, its
    /// last records the rest. The asking instance waits this long (and a margin) while loading the
    /// session, so it is short: a live owner answers within milliseconds, a busy one is asked again
    /// by the next request.
    var handOffBudget: Duration { min(requestTimeout, .seconds(1)) }
}

extension NATSStorage {
    // MARK: Serving

    /// Answers hand-off requests for the sessions this instance runs (at start, once attached).
    func serveHandOffs() throws(NATSStorageError) {
        do {
            _ = try connection.subscribe(to: names.handOff(options.instance)) { [weak self] message in
                // Off the connection's thread: serving waits for the session's last acknowledgements.
                guard let storage = self else { return }
                DispatchQueue.global().async { storage.serveHandOff(message) }
            }
        } catch {
            throw NATSStorageError(
                description: "cannot listen for hand-off requests on \(names.handOff(options.instance)): \(error)")
        }
    }

    /// One request: `{"session": id, "from": instance}`.
    func serveHandOff(_ message: NATSMessage) {
        guard let replyTo = message.replyTo else { return }
        guard let request = try? JSONParser(maxDepth: 4, maxBytes: 4096).parse(message.payload),
            let id = request["session"]?.stringValue,
            let from = request["from"]?.stringValue, (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy(\.isNameCharacter)
        else {
            return answer(replyTo, .refused("the hand-off request is not {\"session\": id, \"from\": instance}"))
        }
        let deadline = OwnershipLease.now() + (options.handOffBudget / 2).nanoseconds
        attemptHandOff(id, to: from, replyTo: replyTo, deadline: deadline)
    }

    /// Asks the sessions in memory to let `id` go; while one of its effects runs (or a load holds the
    /// store) asks again every 10 ms until `deadline`.
    func attemptHandOff(_ id: String, to instance: String, replyTo: String, deadline: Int64) {
        let outcome = resident.withLock { $0 }?.handOff(id, to: instance) ?? .notResident
        switch outcome {
        case .left:
            metrics.handOffsServed.increment()
            loader.handOffs.noteHandedOff(id, to: instance)
            logger.info(
                "handed a session off to the instance that asked for it",
                ["session": .string(id), "to": .string(instance)])
            answer(replyTo, giveUp(id))
        case .notResident:
            answer(replyTo, giveUp(id))
        case .busy(let reason):
            guard OwnershipLease.now() < deadline else { return answer(replyTo, .refused(reason)) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { [self] in
                attemptHandOff(id, to: instance, replyTo: replyTo, deadline: deadline)
            }
        }
    }

    /// Waits for the records of a log leaving memory, then deletes this instance's claim on `id` (if
    /// it has one): from then on another instance may claim the session.
    func giveUp(_ id: String) -> HandOffReply {
        if let log = logs.withLock({ $0[id] }) {
            guard log.state.withLock({ $0.releasing || $0.stop != nil }) else {
                return .refused("this instance still writes the session")
            }
            let done = DispatchSemaphore(value: 0)
            log.whenDrained { done.signal() }
            if done.wait(timeout: .now() + (options.handOffBudget / 2).timeInterval) == .timedOut {
                return .refused("its last records are not stored yet")
            }
        }
        // The next owner's writes of the entry come after this one's last timer time.
        guard timers.waitUntilWritten(id, limit: options.handOffBudget / 4) else {
            return .refused("its timer time is not written yet")
        }
        if let reason = claims.giveUp(id) { return .refused(reason) }
        return .released
    }

    func answer(_ replyTo: String, _ reply: HandOffReply) {
        let body: JSONValue
        switch reply {
        case .released: body = .object(JSONObject([("outcome", .string("released"))]))
        case .refused(let reason):
            body = .object(JSONObject([("outcome", .string("refused")), ("reason", .string(reason))]))
        case .ownerGone, .silent: return
        }
        try? connection.publish(replyTo, payload: body.serialized())
    }
}
