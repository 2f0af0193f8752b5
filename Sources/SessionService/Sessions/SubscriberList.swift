import JSONCodec
import Logs

/// The subscribers of one session and how far each has got; touched only under the session's lock.
/// Not generic: fan-out runs this once per subscriber, and code generic over the reactor that is not
/// specialized looks up the session's type metadata on every call.
@usableFromInline
struct SubscriberList {
    /// In no particular order: a subscriber that leaves is replaced by the last one.
    var all: [Subscriber] = []
    /// The latest state's event and JSON value, made once per version for all subscribers.
    var cache: EncodingCache?
    /// How many of `all` asked for patches: only while one does is the value of the version before kept.
    var patchSubscribers = 0

    @usableFromInline
    /// Whether a `Last-Event-ID` beyond the latest version restarts the subscriber from the latest state: true
    /// where the session runs (its latest version is the newest there is). A relay of a session that runs on
    /// another instance may lag behind what the client saw there, so it waits for newer versions instead.
    let restartsFutureResumes: Bool

    init(restartsFutureResumes: Bool = true) {
        self.restartsFutureResumes = restartsFutureResumes
    }

    @usableFromInline
    var isEmpty: Bool { all.isEmpty }

    @usableFromInline
    var count: Int { all.count }

    /// How the latest state reaches subscribers: its version, and its encodings made on first use.
    @usableFromInline
    struct Latest {
        @usableFromInline let version: UInt64
        /// The storage position of the session's records when it was read: its events show no more.
        @usableFromInline let position: UInt64
        /// The state as one line of JSON; nil when it does not encode (subscribers skip it).
        @usableFromInline let json: () -> [UInt8]?
        /// The state as a JSON value, for subscribers that `select` part of it.
        @usableFromInline let value: () -> JSONValue?
        /// The state's event once looked up in this fan-out: found once, not once per subscriber, and
        /// unretained, since the list's `cache` holds it for as long as the version is the latest (a
        /// retain and release per subscriber were a tenth of a fan-out's instructions).
        var event: Unmanaged<SessionEvent>?
        /// The patch to this version from the one before, once looked up in this fan-out (unretained, as `event`),
        /// and whether it was: a version without one (no value of the one before) is looked up once too.
        var patch: Unmanaged<SessionEvent>?
        var patchLookedUp = false

        @inlinable
        init(version: UInt64, position: UInt64, json: @escaping () -> [UInt8]?, value: @escaping () -> JSONValue?) {
            self.version = version
            self.position = position
            self.json = json
            self.value = value
        }
    }

    /// Where a session's deliveries are counted and reported.
    @usableFromInline
    struct Reporting {
        @usableFromInline let context: SessionContext
        @usableFromInline let sessionID: String

        @inlinable
        init(context: SessionContext, sessionID: String) {
            self.context = context
            self.sessionID = sessionID
        }
    }

    /// A new state (and the pulses it carried) for every subscriber; each transport is handed the
    /// fan-out once.
    @usableFromInline
    mutating func publish(_ latest: Latest, pulses: [SessionEvent], reporting: Reporting) {
        var anyClosed = false
        var latest = latest
        DeliveryBatch.run { batch in
            for subscriber in all {
                deliver(&latest, pulses: pulses, to: subscriber, reporting: reporting, batch: &batch)
                anyClosed = anyClosed || subscriber.closed
            }
        }
        if anyClosed { removeClosed(reporting) }
    }

    /// Adds a subscriber with its sink; with `latest` (the state is known), sends it what it has not seen.
    mutating func add(_ subscriber: Subscriber, sink: any SubscriberSink, latest: Latest?, reporting: Reporting) {
        // Its transport closed before it got here: nothing to add, nothing to remove later, and no
        // sink to hold (the transport's notice handler holds the subscriber).
        guard !subscriber.closed else {
            subscriber.hold?.release()
            return
        }
        subscriber.sink = sink
        subscriber.index = all.count
        all.append(subscriber)
        if subscriber.patches { patchSubscribers += 1 }
        reporting.context.metrics.subscribers.increment()
        guard var latest, let sink = subscriber.sink else { return }
        DeliveryBatch.run { sendLatest(&latest, to: subscriber, sink: sink, reporting: reporting, batch: &$0) }
        if subscriber.closed { remove(subscriber, reporting) }
    }

    /// A notice from a subscriber's transport: it ended, or it drained after refusing events.
    mutating func handle(_ notice: SubscriberNotice, for subscriber: Subscriber, latest: Latest?, reporting: Reporting)
    {
        guard !subscriber.closed else { return }
        switch notice {
        case .closed:
            // Also when it has not been added yet (its transport closed as it subscribed): `add` skips it.
            subscriber.closed = true
            if subscriber.index < all.count, all[subscriber.index] === subscriber { remove(subscriber, reporting) }
            subscriber.sink = nil
        case .drained:
            guard subscriber.behind, let sink = subscriber.sink else { return }
            subscriber.behind = false
            DeliveryBatch.run { batch in
                if var latest { sendLatest(&latest, to: subscriber, sink: sink, reporting: reporting, batch: &batch) }
                while !subscriber.behind, !subscriber.closed, let pulse = subscriber.pendingPulses.first {
                    switch sink.send(pulse, in: &batch) {
                    case .queued: subscriber.pendingPulses.removeFirst()
                    case .overflow: subscriber.behind = true
                    case .closed: subscriber.closed = true
                    }
                }
            }
            if subscriber.closed { remove(subscriber, reporting) }
        }
    }

    /// Takes every subscriber out (the session ends); returns the ones still open, to be finished.
    mutating func removeAll(_ reporting: Reporting) -> [Subscriber] {
        let open = all.filter { !$0.closed }
        for subscriber in open { subscriber.closed = true }
        for subscriber in all { subscriber.hold?.release() }
        reporting.context.metrics.subscribers.decrement(by: all.count)
        all = []
        patchesEnded(count: patchSubscribers)
        return open
    }

    /// Sends the latest state (when newer than what the subscriber has) and then the `pulses` of the part
    /// of the state it follows.
    mutating func deliver(
        _ latest: inout Latest, pulses: [SessionEvent], to subscriber: Subscriber, reporting: Reporting,
        batch: inout DeliveryBatch
    ) {
        guard !subscriber.closed, let sink = subscriber.sink else { return }
        if subscriber.behind {
            subscriber.drops += 1
            reporting.context.metrics.subscriberDrops.increment()
        } else {
            sendLatest(&latest, to: subscriber, sink: sink, reporting: reporting, batch: &batch)
        }
        for pulse in pulses where subscriber.follows(pulse) {
            if subscriber.behind || !subscriber.pendingPulses.isEmpty {
                queue(pulse, for: subscriber, reporting: reporting)
            } else {
                switch sink.send(pulse, in: &batch) {
                case .queued: break
                case .overflow:
                    subscriber.behind = true
                    queue(pulse, for: subscriber, reporting: reporting)
                case .closed: subscriber.closed = true
                }
            }
            if subscriber.closed { return }
        }
    }

    /// Sends the latest state if the subscriber has not seen it (and, with `select`, if the selected
    /// value changed); marks it behind on overflow.
    mutating func sendLatest(
        _ latest: inout Latest, to subscriber: Subscriber, sink: any SubscriberSink, reporting: Reporting,
        batch: inout DeliveryBatch
    ) {
        let version = latest.version
        if let last = subscriber.lastSentVersion, last >= version {
            guard last > version, restartsFutureResumes else { return }
            // Versions never go back and one is shown only once stored, so a Last-Event-ID beyond the current
            // version was not seen of this session: of an earlier one with this id (deleted, then created
            // again) or of another server's. The subscriber starts from the current state.
            subscriber.lastSentVersion = nil
            subscriber.lastSelected = nil
            subscriber.patchBase = nil
        }
        let result: DeliveryResult
        if subscriber.select != nil || subscriber.patches {
            // Out of line: the whole state, below, is what nearly every delivery takes.
            let sent = sendSelectedOrPatch(&latest, to: subscriber, sink: sink, reporting: reporting, batch: &batch)
            guard let sent else { return }
            result = sent
        } else {
            guard let sent = sendState(&latest, sink: sink, batch: &batch) else { return }
            result = sent
        }
        switch result {
        case .queued:
            subscriber.lastSentVersion = version
            if subscriber.patches { holdPatchBase(latest, for: subscriber) }
        case .overflow:
            subscriber.behind = true
            subscriber.drops += 1
            reporting.context.metrics.subscriberDrops.increment()
            if subscriber.select != nil { subscriber.lastSelected = nil }
        // Its patch base stays: if this version is still the latest once it drains, it gets the patch after
        // all; if newer ones came meanwhile, it skipped some, and the version check sends the whole state.
        case .closed:
            subscriber.closed = true
        }
    }

    /// Sends the latest state whole (its event made once per version); nil when it does not encode.
    @inline(__always)
    mutating func sendState(
        _ latest: inout Latest, sink: any SubscriberSink, batch: inout DeliveryBatch
    ) -> DeliveryResult? {
        if latest.event == nil {
            guard let made = stateEvent(latest) else { return nil }
            latest.event = Unmanaged.passUnretained(made)
        }
        return latest.event.unsafelyUnwrapped._withUnsafeGuaranteedRef { sink.send($0, in: &batch) }
    }

    /// What a subscriber that selects part of the state or asks for patches is sent of the latest state: the
    /// selected value when it changed, a patch when one applies, else the whole; nil when nothing is sent.
    @inline(never)
    mutating func sendSelectedOrPatch(
        _ latest: inout Latest, to subscriber: Subscriber, sink: any SubscriberSink, reporting: Reporting,
        batch: inout DeliveryBatch
    ) -> DeliveryResult? {
        let version = latest.version
        guard let pointer = subscriber.select else {
            if let patch = patchEvent(&latest, for: subscriber, reporting: reporting) {
                return patch._withUnsafeGuaranteedRef { sink.send($0, in: &batch) }
            }
            return sendState(&latest, sink: sink, batch: &batch)
        }
        guard let value = stateValue(latest) else { return nil }
        let selected = value[pointer] ?? .null
        if subscriber.lastSelected == selected {
            subscriber.lastSentVersion = version
            // What it holds is this version's value too; a patch to the next starts from here.
            if let base = subscriber.patchBase { subscriber.patchBase = base &+ 1 == version ? version : nil }
            return nil
        }
        subscriber.lastSelected = selected
        let patch = subscriber.patches ? selectedPatch(latest, at: pointer, for: subscriber, reporting: reporting) : nil
        return sink.send(
            patch ?? SessionEvent(.state(version: version), json: selected.serialized(), position: latest.position),
            in: &batch)
    }

    /// Holds a pulse for a subscriber that is behind; past the buffer, ends its subscription with a reason.
    func queue(_ pulse: SessionEvent, for subscriber: Subscriber, reporting: Reporting) {
        let context = reporting.context
        guard subscriber.pendingPulses.count < context.limits.pulseBuffer else {
            subscriber.closed = true
            context.metrics.subscribersClosedSlow.increment()
            let message =
                "subscriber too slow: more than \(context.limits.pulseBuffer) pulses waited to be sent "
                + "(sse.pulseBuffer); reconnect to get the current state"
            subscriber.sink?.finish(.tooSlow(message: message))
            context.logger.notice(
                "closed a subscriber that could not keep up",
                ["session": .string(reporting.sessionID), "pending_pulses": .int(subscriber.pendingPulses.count)])
            return
        }
        subscriber.pendingPulses.append(pulse)
    }

    /// The event of the latest state, made once per version.
    mutating func stateEvent(_ latest: Latest) -> SessionEvent? {
        if let cache, cache.version == latest.version, let event = cache.event { return event }
        guard let json = latest.json() else { return nil }
        let event = SessionEvent(.state(version: latest.version), json: json, position: latest.position)
        cache(latest.version).event = event
        return event
    }

    /// The latest state as a JSON value (for `select`), computed once per version.
    mutating func stateValue(_ latest: Latest) -> JSONValue? {
        if let cache, cache.version == latest.version, let value = cache.value { return value }
        guard let value = latest.value() else { return nil }
        cache(latest.version).value = value
        return value
    }

    /// The cache for `version`, replacing one for an older version (whose value, if made, patches start from).
    mutating func cache(_ version: UInt64) -> EncodingCache {
        if let cache, cache.version == version { return cache }
        let fresh = EncodingCache(version: version)
        if patchSubscribers > 0, let cache, let value = cache.value { fresh.previous = (cache.version, value) }
        cache = fresh
        return fresh
    }

    /// Takes out every closed subscriber (some closed during a fan-out).
    mutating func removeClosed(_ reporting: Reporting) {
        let before = all.count
        var patchesLeaving = 0
        all.removeAll { subscriber in
            guard subscriber.closed else { return false }
            if subscriber.patches { patchesLeaving += 1 }
            subscriber.sink = nil
            subscriber.hold?.release()
            return true
        }
        for (index, subscriber) in all.enumerated() { subscriber.index = index }
        reporting.context.metrics.subscribers.decrement(by: before - all.count)
        if patchesLeaving > 0 { patchesEnded(count: patchesLeaving) }
    }

    /// Takes out one closed subscriber in constant time, so that thousands of subscribers leaving
    /// at once (a load generator or a client fleet going away) cost thousands of steps, not millions.
    mutating func remove(_ subscriber: Subscriber, _ reporting: Reporting) {
        let index = subscriber.index
        guard index < all.count, all[index] === subscriber else { return removeClosed(reporting) }
        if subscriber.patches { patchesEnded() }
        let last = all.removeLast()
        if last !== subscriber {
            all[index] = last
            last.index = index
        }
        // The sink (and through it the transport) may refer back to the subscriber: let both go.
        subscriber.sink = nil
        subscriber.hold?.release()
        reporting.context.metrics.subscribers.decrement()
    }

    /// Ends subscriptions taken out by ``removeAll(_:)``, outside the session's lock.
    static func finish(_ subscribers: [Subscriber], _ end: SubscriptionEnd) {
        for subscriber in subscribers {
            subscriber.sink?.finish(end)
            subscriber.sink = nil
        }
    }
}

/// The latest state's encodings for subscribers, made at most once per version.
final class EncodingCache: @unchecked Sendable {
    let version: UInt64
    var event: SessionEvent?
    var value: JSONValue?
    /// The value of the version cached before this one, when it was made: the state patches start from.
    var previous: (version: UInt64, value: JSONValue)?
    /// The patch of the whole state from `previous`, and whether it was tried (nil then: no `previous`).
    var patch: SessionEvent?
    var patchTried = false
    /// The patches of selected values from `previous`, one per pointer subscribers select.
    var selectedPatches: [(pointer: JSONPointer, event: SessionEvent?)] = []

    init(version: UInt64) { self.version = version }
}
