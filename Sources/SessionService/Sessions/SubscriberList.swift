import HTTPServer
import JSONCodec
import Logs

/// The SSE subscribers of one session and how far each has got; touched only under the session's
/// lock. Not generic: fan-out runs this once per subscriber, and code generic over the reactor that
/// is not specialized looks up the session's type metadata on every call.
@usableFromInline
struct SubscriberList {
    /// In no particular order: a subscriber that leaves is replaced by the last one.
    var all: [Subscriber] = []
    /// Encodings of the latest state, made once per version for all subscribers.
    var cache: EncodingCache?

    @usableFromInline
    init() {}

    @usableFromInline
    var isEmpty: Bool { all.isEmpty }

    @usableFromInline
    var count: Int { all.count }

    /// How the latest state reaches subscribers: its version, and its encodings made on first use.
    @usableFromInline
    struct Latest {
        @usableFromInline let version: UInt64
        /// The `state` event; nil when the state does not encode (subscribers skip it).
        @usableFromInline let event: () -> EncodedServerSentEvent?
        /// The state as a JSON value, for subscribers that `select` part of it.
        @usableFromInline let value: () -> JSONValue?

        @inlinable
        init(version: UInt64, event: @escaping () -> EncodedServerSentEvent?, value: @escaping () -> JSONValue?) {
            self.version = version
            self.event = event
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

    /// A new state (and the pulses it carried) for every subscriber; each loop is told once.
    @usableFromInline
    mutating func publish(_ latest: Latest, pulses: [PulseEvent], reporting: Reporting) {
        var anyClosed = false
        ServerSentEventStream.batch { batch in
            for subscriber in all {
                deliver(latest, pulses: pulses, to: subscriber, reporting: reporting, batch: &batch)
                anyClosed = anyClosed || subscriber.closed
            }
        }
        if anyClosed { removeClosed(reporting) }
    }

    /// Adds a subscriber; with `latest` (the state is known), sends it what it has not seen.
    mutating func add(_ subscriber: Subscriber, latest: Latest?, reporting: Reporting) {
        subscriber.index = all.count
        all.append(subscriber)
        reporting.context.metrics.subscribers.increment()
        guard let latest, let stream = subscriber.stream else { return }
        ServerSentEventStream.batch { sendLatest(latest, to: subscriber, stream: stream, reporting: reporting, batch: &$0) }
        if subscriber.closed { remove(subscriber, reporting) }
    }

    /// A notice from a subscriber's stream: it ended, or it drained after refusing events.
    mutating func handle(_ notice: EventStreamNotice, for subscriber: Subscriber, latest: Latest?, reporting: Reporting) {
        guard !subscriber.closed, let stream = subscriber.stream else { return }
        switch notice {
        case .closed:
            subscriber.closed = true
            remove(subscriber, reporting)
        case .drained:
            guard subscriber.behind else { return }
            subscriber.behind = false
            if let latest {
                ServerSentEventStream.batch { sendLatest(latest, to: subscriber, stream: stream, reporting: reporting, batch: &$0) }
            }
            while !subscriber.behind, !subscriber.closed, let pulse = subscriber.pendingPulses.first {
                switch stream.send(pulse) {
                case .queued: subscriber.pendingPulses.removeFirst()
                case .overflow: subscriber.behind = true
                case .closed: subscriber.closed = true
                }
            }
            if subscriber.closed { remove(subscriber, reporting) }
        }
    }

    /// Takes every subscriber out (the session ends); returns the ones still open.
    mutating func removeAll(_ reporting: Reporting) -> [Subscriber] {
        let open = all.filter { !$0.closed }
        for subscriber in open { subscriber.closed = true }
        reporting.context.metrics.subscribers.decrement(by: all.count)
        all = []
        return open
    }

    /// Sends the latest state (when newer than what the subscriber has) and then the `pulses` of the part
    /// of the state it follows.
    mutating func deliver(_ latest: Latest, pulses: [PulseEvent], to subscriber: Subscriber, reporting: Reporting, batch: inout ServerSentEventStream.Batch) {
        guard !subscriber.closed, let stream = subscriber.stream else { return }
        if subscriber.behind {
            subscriber.drops += 1
            reporting.context.metrics.subscriberDrops.increment()
        } else {
            sendLatest(latest, to: subscriber, stream: stream, reporting: reporting, batch: &batch)
        }
        for pulseEvent in pulses where subscriber.follows(pulse: pulseEvent.name) {
            let pulse = pulseEvent.event
            if subscriber.behind || !subscriber.pendingPulses.isEmpty {
                queue(pulse, for: subscriber, reporting: reporting)
            } else {
                switch stream.send(pulse, in: &batch) {
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
    mutating func sendLatest(_ latest: Latest, to subscriber: Subscriber, stream: ServerSentEventStream, reporting: Reporting, batch: inout ServerSentEventStream.Batch) {
        let version = latest.version
        if let last = subscriber.lastSentVersion, last >= version {
            // A Last-Event-ID from the future (another server's history) must not hide new states.
            if last > version { subscriber.lastSentVersion = version }
            return
        }
        let event: EncodedServerSentEvent
        if let pointer = subscriber.select {
            guard let value = stateValue(latest) else { return }
            let selected = value[pointer] ?? .null
            if subscriber.lastSelected == selected {
                subscriber.lastSentVersion = version
                return
            }
            event = EncodedServerSentEvent(ServerSentEvent(event: "state", id: String(version), data: selected.serializedString()))
            subscriber.lastSelected = selected
        } else {
            guard let encoded = stateEvent(latest) else { return }
            event = encoded
        }
        switch stream.send(event, in: &batch) {
        case .queued:
            subscriber.lastSentVersion = version
        case .overflow:
            subscriber.behind = true
            subscriber.drops += 1
            reporting.context.metrics.subscriberDrops.increment()
            if subscriber.select != nil { subscriber.lastSelected = nil }
        case .closed:
            subscriber.closed = true
        }
    }

    /// Holds a pulse for a subscriber that is behind; past the buffer, closes its stream with a reason.
    func queue(_ pulse: EncodedServerSentEvent, for subscriber: Subscriber, reporting: Reporting) {
        let context = reporting.context
        guard subscriber.pendingPulses.count < context.limits.pulseBuffer else {
            subscriber.closed = true
            context.metrics.subscribersClosedSlow.increment()
            let message = "subscriber too slow: more than \(context.limits.pulseBuffer) pulses waited to be sent (sse.pulseBuffer); reconnect to get the current state"
            var data = JSONWriter()
            data.raw("{\"code\":\"subscriber_too_slow\",\"message\":")
            data.string(message)
            data.raw("}")
            subscriber.stream?.close(with: ServerSentEvent(event: "error", data: String(decoding: data.bytes, as: UTF8.self)))
            context.logger.notice("closed a subscriber that could not keep up", ["session": .string(reporting.sessionID), "pending_pulses": .int(subscriber.pendingPulses.count)])
            return
        }
        subscriber.pendingPulses.append(pulse)
    }

    /// The SSE event of the latest state, encoded once per version.
    mutating func stateEvent(_ latest: Latest) -> EncodedServerSentEvent? {
        if let cache, cache.version == latest.version, let event = cache.event { return event }
        guard let event = latest.event() else { return nil }
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

    /// The cache for `version`, replacing one for an older version.
    mutating func cache(_ version: UInt64) -> EncodingCache {
        if let cache, cache.version == version { return cache }
        let fresh = EncodingCache(version: version)
        cache = fresh
        return fresh
    }

    /// Takes out every closed subscriber (some closed during a fan-out).
    mutating func removeClosed(_ reporting: Reporting) {
        let before = all.count
        all.removeAll { $0.closed }
        for (index, subscriber) in all.enumerated() { subscriber.index = index }
        reporting.context.metrics.subscribers.decrement(by: before - all.count)
    }

    /// Takes out one closed subscriber in constant time, so that thousands of subscribers leaving
    /// at once (a load generator or a client fleet going away) cost thousands of steps, not millions.
    mutating func remove(_ subscriber: Subscriber, _ reporting: Reporting) {
        let index = subscriber.index
        guard index < all.count, all[index] === subscriber else { return removeClosed(reporting) }
        let last = all.removeLast()
        if last !== subscriber {
            all[index] = last
            last.index = index
        }
        reporting.context.metrics.subscribers.decrement()
    }
}

/// One assigned `@Pulse` property, encoded once for every subscriber that follows it.
@usableFromInline
struct PulseEvent {
    /// The property name: which part of the state it belongs to (`/name`).
    @usableFromInline let name: String
    @usableFromInline let event: EncodedServerSentEvent

    @inlinable
    init(name: String, event: EncodedServerSentEvent) {
        self.name = name
        self.event = event
    }
}

/// The latest state's encodings for subscribers, made at most once per version.
final class EncodingCache: @unchecked Sendable {
    let version: UInt64
    var event: EncodedServerSentEvent?
    var value: JSONValue?

    init(version: UInt64) { self.version = version }
}

/// One SSE subscriber's delivery state; only touched under its session's lock.
final class Subscriber: @unchecked Sendable {
    var stream: ServerSentEventStream?
    let select: JSONPointer?
    let selectText: String?
    var lastSentVersion: UInt64?
    var lastSelected: JSONValue?
    /// Its output buffer overflowed: states are skipped until it drains, then it gets the latest.
    var behind = false
    var pendingPulses: [EncodedServerSentEvent] = []
    var drops = 0
    var closed = false
    /// Where it is in its SubscriberList's `all`.
    var index = 0

    init(select: JSONPointer?, selectText: String?) {
        self.select = select
        self.selectText = selectText
    }

    /// Whether pulse `name` (state member `/name`) belongs to what this subscriber follows: the whole state,
    /// or a `select` pointer at or inside `/name`. A stream that selected another part gets none of it.
    func follows(pulse name: String) -> Bool {
        guard let first = select?.tokens.first else { return true }
        return first == name
    }
}
