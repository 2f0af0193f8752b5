import JSONCodec
import Logs

// Durable timers in the service: the index armed at start (from what storage holds), due sessions loaded and
// fired, and the admin routes that list and cancel a session's timers.
extension ReactorService {
    /// Notes the timers storage holds (sessions not in memory) and starts firing them on the service clock.
    func startTimers() {
        if let storage = store.storage {
            for (id, at) in storage.timerHints() { context.timers.note(id, at: at) }
        }
        context.timers.start { [weak self] id in self?.fireTimers(of: id) }
    }

    /// How long an instance waits before it looks again at a due timer of a session another live instance runs
    /// (that one fires it; this one does if it is gone by then).
    static var ownerRecheckNanoseconds: Int64 { 5_000_000_000 }

    /// Loads session `id` if it is not in memory and fires its due timers (the index picked it). In a cluster
    /// only the session's owner fires them; a session nobody runs is loaded (claimed) here, so the journal's
    /// fencing lets exactly one instance append the timer's action.
    func fireTimers(of id: String) {
        if let peers, !store.isResident(id), peers.owner(of: id) != nil {
            context.timers.note(id, at: context.clock.wallNanoseconds() + Self.ownerRecheckNanoseconds)
            return
        }
        // A session leaving memory between the lookup and the firing is looked up (loaded) again.
        for _ in 0..<3 {
            guard let session = store.session(id) else { return lookAgainLater(id) }
            do {
                let fired = try session.fireDueTimers()
                if fired > 0 { logger.debug("fired due timers", ["session": .string(id), "count": .int(fired)]) }
                return
            } catch {
                continue
            }
        }
        logger.warning(
            "a session's due timers could not fire: it kept leaving memory; retrying", ["session": .string(id)])
        context.timers.note(id, at: context.clock.wallNanoseconds() + 1_000_000_000)
    }

    /// A due session that could not be loaded here (storage failed or was slow to answer, or the claim of an owner
    /// that just died still looked live to the load): its timers are looked at again later, not forgotten. A
    /// deleted session's are dropped, and so are a quarantined one's (a release loads it and notes them again).
    func lookAgainLater(_ id: String) {
        switch store.absence(id) {
        case .unknown, .unavailable: return
        case let absence:
            logger.info(
                "a session's due timers wait: it could not be loaded here; looking again in 5 s",
                ["session": .string(id), "why": .string(APIError(absence).message)])
            context.timers.note(id, at: context.clock.wallNanoseconds() + Self.ownerRecheckNanoseconds)
        }
    }

    /// `GET /admin/sessions/{id}/timers`: the pending timers, soonest first.
    func adminTimers(_ exchange: Exchange) {
        let id = exchange.id
        if forwardToOwner(id, exchange) { return }
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        let timers = session.pendingTimers()
        var out = JSONWriter(capacity: 32 + timers.count * 96)
        out.raw("{\"timers\":[")
        for (index, timer) in timers.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"name\":")
            out.string(timer.name)
            out.raw(",\"at\":")
            out.string(JSONLineLogHandler.rfc3339(Double(timer.at) / 1e9))
            out.raw(",\"action\":")
            out.raw(timer.action)
            out.raw("}")
        }
        out.raw("]}")
        replyShowing(session, json: out.bytes, exchange)
    }

    /// `DELETE /admin/sessions/{id}/timers/{name}`: cancels one pending timer (journaled).
    func adminCancelTimer(_ exchange: Exchange) {
        let id = exchange.id
        if forwardToOwner(id, exchange) { return }
        let segments = exchange.request.pathSegments
        guard segments.count == 5 else { return exchange.fail(APIError(.unknownTimer, "the path names no timer")) }
        let name = segments[4]
        guard let session = store.session(id) else { return exchange.fail(store.absence(id)) }
        if let reason = store.storage?.unavailableReason {
            return exchange.fail(APIError(.storageUnavailable, "a cancellation cannot be stored now: \(reason)"))
        }
        guard session.cancelTimer(name) else {
            return exchange.fail(
                APIError(
                    .unknownTimer,
                    "session \(JSONWriter.quoted(id)) has no pending timer \(JSONWriter.quoted(name)); "
                        + "GET /admin/sessions/\(id)/timers lists them"))
        }
        exchange.dependsOn = session.storedPosition
        exchange.reply(204, body: [], contentType: nil)
    }
}
