import HTTPServer
import JSONCodec
import Logs
import Reactors
import Synchronization

/// One session: a reactor runtime, its action log and its SSE subscribers.
///
/// The hot paths (`send`, publishing a state) are `@inlinable` so they are specialized for the
/// concrete reactor where it is registered; generic code across modules is many times slower.
@usableFromInline
final class Session<R: Reactor>: HostedSession {
    @usableFromInline let id: String
    @usableFromInline let reactorName: String
    @usableFromInline let runtime: ReactorRuntime<InstrumentedReactor<R>>
    @usableFromInline let context: SessionContext
    /// Serializes accepting actions so the log is in `seq` order; never held while waiting.
    @usableFromInline let log: Mutex<ActionLog>
    /// The latest state and the subscribers; held while a state is fanned out, so a subscriber
    /// registers either before a version (and gets it) or after (and gets it as its first event).
    @usableFromInline let shared: Mutex<Shared>
    @usableFromInline let activity: Atomic<UInt64>
    /// Where this session is journaled; nil in memory-only mode.
    @usableFromInline let journal: SessionJournal?
    /// Set (under the shared lock) when the session leaves memory; requests that still hold it retry
    /// on the session loaded back.
    @usableFromInline let passivated = Atomic<Bool>(false)

    @usableFromInline
    struct Shared {
        /// The latest state the observer delivered; valid once `observed` (the observer starts with the
        /// first subscriber: an idle session carries no observer, which is most of its memory).
        @usableFromInline var latest: Snapshot<R.State>
        /// Encodings of `latest`, made once per version for all subscribers.
        @usableFromInline var cache: EncodingCache?
        @usableFromInline var subscribers: [Subscriber] = []
        @usableFromInline var observation: ObservationToken?
        // The flags last, packed together: this struct is part of every idle session.
        @usableFromInline var observed = false
        @usableFromInline var observing = false
        @usableFromInline var ended = false

        @inlinable
        init(latest: Snapshot<R.State>) { self.latest = latest }
    }

    @inlinable
    init(id: String, name: String, reactor: R, context: SessionContext, restoring checkpoint: Checkpoint<R.State>? = nil, journal existing: SessionJournal? = nil, actions: [ActionLogEntry] = []) {
        self.id = id
        reactorName = name
        self.context = context
        runtime = ReactorRuntime(InstrumentedReactor(reactor, context: context, sessionID: id), restoring: checkpoint)
        // Setting it allocates the runtime's rarely used extras: only when it differs from the default.
        if runtime.stubRecordLimit != context.limits.stubRecordLimit { runtime.stubRecordLimit = context.limits.stubRecordLimit }
        var actionLog = ActionLog(limit: context.limits.actionLogLimit)
        for entry in actions { actionLog.append(entry) }
        log = Mutex(actionLog)
        journal = existing ?? Self.createJournal(id: id, name: name, runtime: runtime, context: context)
        shared = Mutex(Shared(latest: runtime.currentSnapshot))
        activity = Atomic(context.clock.monotonicNanoseconds())
        attachJournal()
    }

    // MARK: Actions

    @inlinable
    func send(actionBody: [UInt8], completion: (@Sendable (Result<EncodedSnapshot, APIError>) -> Void)?) throws(APIError) -> UInt64 {
        if let storage = journal?.storage, storage.failing.load(ordering: .relaxed), let reason = storage.unavailableReason {
            throw APIError.storageUnavailable(reason)
        }
        let action: R.Action
        do {
            action = try decodeAction(R.Action.self, from: actionBody)
        } catch {
            throw APIError.action(error, reactor: reactorName)
        }
        let at = context.clock.wallNanoseconds()
        let seq: UInt64
        do {
            seq = try log.withLock { (log: inout ActionLog) throws(ReactorError) -> UInt64 in
                let stubbed = runtime.isStubEnabled
                let seq: UInt64
                if let journal {
                    let ticket = ActionTicket()
                    if let completion {
                        seq = try runtime.send(action) { [weak self] result in
                            journal.completed(ticket)
                            guard let self else { return completion(.failure(.sessionEnded)) }
                            completion(self.encoded(result))
                        }
                    } else {
                        // No caller waits: no weak reference to take and load on every action.
                        seq = try runtime.send(action) { _ in journal.completed(ticket) }
                    }
                    log.append(ActionLogEntry(seq: seq, at: at, action: actionBody, stubbed: stubbed))
                    journal.accepted(ticket, seq: seq, at: at, stubbed: stubbed, body: actionBody)
                    if journal.isSnapshotDue { writeSnapshot(&log, passivating: false) }
                    return seq
                }
                if let completion {
                    seq = try runtime.send(action) { [weak self] result in
                        guard let self else { return completion(.failure(.sessionEnded)) }
                        completion(self.encoded(result))
                    }
                } else {
                    seq = try runtime.send(action)
                }
                log.append(ActionLogEntry(seq: seq, at: at, action: actionBody, stubbed: stubbed))
                return seq
            }
        } catch {
            if case .stopped = error, passivated.load(ordering: .acquiring) { throw APIError.sessionPassivated }
            throw APIError.reactor(error)
        }
        context.metrics.actionsAccepted.increment()
        return seq
    }

    @inlinable
    func encoded(_ result: Result<Snapshot<R.State>, ReactorError>) -> Result<EncodedSnapshot, APIError> {
        switch result {
        case .success(let snapshot):
            do {
                return .success(EncodedSnapshot(version: snapshot.version, state: try JSONValueEncoder().encode(snapshot.state)))
            } catch {
                return .failure(.internal("the state of version \(snapshot.version) does not encode as JSON: \(error)"))
            }
        case .failure(let error):
            return .failure(.reactor(error))
        }
    }

    @usableFromInline
    func snapshot() -> EncodedSnapshot {
        let latest = runtime.currentSnapshot
        return (try? encoded(.success(latest)).get()) ?? EncodedSnapshot(version: latest.version, state: Array("null".utf8))
    }

    // MARK: Publishing

    /// Called by the runtime, serially, for every new state before anyone else can read it.
    @inlinable
    func publish(_ snapshot: Snapshot<R.State>, pulses: [PulseUpdate]) {
        shared.withLock { shared in
            shared.latest = snapshot
            shared.observed = true
            guard !shared.subscribers.isEmpty else { return }
            let pulseEvents = pulses.compactMap { encodePulse($0) }
            var anyClosed = false
            for subscriber in shared.subscribers {
                deliver(to: subscriber, pulses: pulseEvents, shared: &shared)
                anyClosed = anyClosed || subscriber.closed
            }
            if anyClosed { removeClosed(&shared) }
        }
    }

    /// Sends the latest state (when newer than what the subscriber has) and then `pulses`.
    @usableFromInline
    func deliver(to subscriber: Subscriber, pulses: [EncodedServerSentEvent], shared: inout Shared) {
        guard !subscriber.closed, let stream = subscriber.stream else { return }
        if subscriber.behind {
            subscriber.drops += 1
            context.metrics.subscriberDrops.increment()
        } else {
            sendLatest(to: subscriber, stream: stream, shared: &shared)
        }
        for pulse in pulses {
            if subscriber.behind || !subscriber.pendingPulses.isEmpty {
                queue(pulse, for: subscriber)
            } else {
                switch stream.send(pulse) {
                case .queued: break
                case .overflow:
                    subscriber.behind = true
                    queue(pulse, for: subscriber)
                case .closed: subscriber.closed = true
                }
            }
            if subscriber.closed { return }
        }
    }

    /// Sends the latest state if the subscriber has not seen it (and, with `select`, if the selected
    /// value changed); marks it behind on overflow.
    func sendLatest(to subscriber: Subscriber, stream: ServerSentEventStream, shared: inout Shared) {
        guard shared.observed else { return }  // the observer's first event delivers it
        let version = shared.latest.version
        if let last = subscriber.lastSentVersion, last >= version {
            // A Last-Event-ID from the future (another server's history) must not hide new states.
            if last > version { subscriber.lastSentVersion = version }
            return
        }
        let event: EncodedServerSentEvent
        if let pointer = subscriber.select {
            guard let value = stateValue(&shared) else { return }
            let selected = value[pointer] ?? .null
            if subscriber.lastSelected == selected {
                subscriber.lastSentVersion = version
                return
            }
            event = EncodedServerSentEvent(ServerSentEvent(event: "state", id: String(version), data: selected.serializedString()))
            subscriber.lastSelected = selected
        } else {
            guard let encoded = stateEvent(&shared) else { return }
            event = encoded
        }
        switch stream.send(event) {
        case .queued:
            subscriber.lastSentVersion = version
        case .overflow:
            subscriber.behind = true
            subscriber.drops += 1
            context.metrics.subscriberDrops.increment()
            if subscriber.select != nil { subscriber.lastSelected = nil }
        case .closed:
            subscriber.closed = true
        }
    }

    /// Holds a pulse for a subscriber that is behind; past the buffer, closes its stream with a reason.
    func queue(_ pulse: EncodedServerSentEvent, for subscriber: Subscriber) {
        guard subscriber.pendingPulses.count < context.limits.pulseBuffer else {
            subscriber.closed = true
            context.metrics.subscribersClosedSlow.increment()
            let message = "subscriber too slow: more than \(context.limits.pulseBuffer) pulses waited to be sent (sse.pulseBuffer); reconnect to get the current state"
            var data = JSONWriter()
            data.raw("{\"code\":\"subscriber_too_slow\",\"message\":")
            data.string(message)
            data.raw("}")
            subscriber.stream?.close(with: ServerSentEvent(event: "error", data: String(decoding: data.bytes, as: UTF8.self)))
            context.logger.notice("closed a subscriber that could not keep up", ["session": .string(id), "pending_pulses": .int(subscriber.pendingPulses.count)])
            return
        }
        subscriber.pendingPulses.append(pulse)
    }

    /// The SSE event of the latest state, encoded once per version.
    func stateEvent(_ shared: inout Shared) -> EncodedServerSentEvent? {
        let version = shared.latest.version
        if let cache = shared.cache, cache.version == version, let event = cache.event { return event }
        do {
            let json = try JSONValueEncoder().encode(shared.latest.state)
            let event = EncodedServerSentEvent(ServerSentEvent(event: "state", id: String(version), data: String(decoding: json, as: UTF8.self)))
            shared.cache(version).event = event
            return event
        } catch {
            context.logger.error("a state does not encode as JSON; subscribers skip it", ["session": .string(id), "version": .int(Int(version)), "error": .string("\(error)")])
            return nil
        }
    }

    /// The latest state as a JSON value (for `select`), computed once per version.
    func stateValue(_ shared: inout Shared) -> JSONValue? {
        let version = shared.latest.version
        if let cache = shared.cache, cache.version == version, let value = cache.value { return value }
        guard let value = try? JSONValueEncoder().encodeValue(shared.latest.state) else { return nil }
        shared.cache(version).value = value
        return value
    }

    @usableFromInline
    func encodePulse(_ pulse: PulseUpdate) -> EncodedServerSentEvent? {
        guard let value = try? JSONValueEncoder().encode(pulse.value) else {
            context.logger.error("a pulse value does not encode as JSON", ["session": .string(id), "pulse": .string(pulse.name)])
            return nil
        }
        var data = JSONWriter()
        data.raw("{\"name\":")
        data.string(pulse.name)
        data.raw(",\"value\":")
        data.raw(value)
        data.raw(",\"count\":")
        data.integer(pulse.count)
        data.raw("}")
        return EncodedServerSentEvent(ServerSentEvent(event: "pulse", data: String(decoding: data.bytes, as: UTF8.self)))
    }

    @usableFromInline
    func removeClosed(_ shared: inout Shared) {
        let before = shared.subscribers.count
        shared.subscribers.removeAll { $0.closed }
        context.metrics.subscribers.decrement(by: before - shared.subscribers.count)
    }

    // MARK: Subscribing

    @usableFromInline
    func subscribe(writer: HTTPResponseWriter, headers: HTTPHeaders, lastEventID: UInt64?, select: JSONPointer?, selectText: String?) {
        let subscriber = Subscriber(select: select, selectText: selectText)
        var passivatedMeanwhile = false
        let stream = writer.startEventStream(headers: headers) { [weak self, subscriber] notice in
            self?.handle(notice, for: subscriber)
        }
        var startObserving = false
        let accepted = shared.withLock { shared -> Bool in
            guard !shared.ended else { return false }
            // Passivation checks for subscribers under this lock: it either saw this one or set the flag first.
            guard !passivated.load(ordering: .relaxed) else {
                passivatedMeanwhile = true
                return false
            }
            subscriber.stream = stream
            subscriber.lastSentVersion = lastEventID
            shared.subscribers.append(subscriber)
            context.metrics.subscribers.increment()
            if shared.observing {
                sendLatest(to: subscriber, stream: stream, shared: &shared)
                if subscriber.closed { removeClosed(&shared) }
            } else {
                shared.observing = true
                startObserving = true
            }
            return true
        }
        guard accepted else {
            return stream.close(with: passivatedMeanwhile ? Self.reconnectEvent : Self.endEvent)
        }
        if startObserving {
            // Outside the lock: the runtime may call the handler right here, with the latest state,
            // which then goes to every subscriber registered so far.
            let token = runtime.observe { [weak self] event in
                guard let self, case .state(let snapshot, let pulses) = event else { return }
                self.publish(snapshot, pulses: pulses)
            }
            let ended = shared.withLock { shared -> Bool in
                shared.observation = token
                return shared.ended
            }
            if ended { token.cancel() }
        }
    }

    /// Closes a stream opened in the instant its session left memory: the client reconnects (as
    /// EventSource does by itself) and gets the session loaded back.
    static var reconnectEvent: ServerSentEvent {
        ServerSentEvent(event: "error", data: #"{"code":"session_passivated","message":"the session left memory as this stream opened; reconnect to follow it"}"#)
    }

    @usableFromInline
    var isPassivated: Bool { passivated.load(ordering: .acquiring) }

    func handle(_ notice: EventStreamNotice, for subscriber: Subscriber) {
        shared.withLock { shared in
            guard !subscriber.closed, let stream = subscriber.stream else { return }
            switch notice {
            case .closed:
                subscriber.closed = true
                removeClosed(&shared)
            case .drained:
                guard subscriber.behind else { return }
                subscriber.behind = false
                sendLatest(to: subscriber, stream: stream, shared: &shared)
                while !subscriber.behind, !subscriber.closed, let pulse = subscriber.pendingPulses.first {
                    switch stream.send(pulse) {
                    case .queued: subscriber.pendingPulses.removeFirst()
                    case .overflow: subscriber.behind = true
                    case .closed: subscriber.closed = true
                    }
                }
                if subscriber.closed { removeClosed(&shared) }
            }
        }
    }

    @usableFromInline
    var subscriberCount: Int { shared.withLock { $0.subscribers.count } }

    @usableFromInline
    func subscriberInfo() -> [SubscriberInfo] {
        shared.withLock { shared in
            shared.subscribers.map {
                SubscriberInfo(queuedBytes: $0.stream?.queuedByteCount ?? 0, lastEventID: $0.lastSentVersion, drops: $0.drops, select: $0.selectText)
            }
        }
    }

    // MARK: Admin

    @usableFromInline
    var isStubEnabled: Bool { runtime.isStubEnabled }

    @usableFromInline
    func setStub(enabled: Bool) {
        // Under the log lock: an action is logged as stubbed exactly when the runtime stubbed it.
        log.withLock { log in
            runtime.isStubEnabled = enabled
            // The stub flag lives in snapshots, so a restart keeps it.
            if journal != nil { writeSnapshot(&log, passivating: false) }
        }
    }

    @usableFromInline
    func forceState(json: [UInt8], reply: @escaping @Sendable (Result<EncodedSnapshot, APIError>) -> Void) {
        if let reason = journal?.storage.unavailableReason { return reply(.failure(.storageUnavailable(reason))) }
        let state: R.State
        do {
            state = try JSONValueDecoder().decode(R.State.self, from: json)
        } catch {
            return reply(.failure(APIError(status: 422, code: "invalid_state", message: "the body does not decode as the state of reactor \(JSONWriter.quoted(reactorName)): \(error)")))
        }
        do {
            try runtime.forceState(state) { [weak self] snapshot in
                self?.context.metrics.statesEmitted.increment()
                guard let self else { return reply(.failure(.sessionEnded)) }
                reply(self.encoded(.success(snapshot)))
            }
        } catch {
            reply(.failure(.reactor(error)))
        }
    }

    @usableFromInline
    func actionLog(since: UInt64, limit: Int) -> (entries: [ActionLogEntry], next: UInt64?) {
        log.withLock { $0.entries(since: since, limit: limit) }
    }

    @usableFromInline
    var lastActive: UInt64 { activity.load(ordering: .relaxed) }

    @usableFromInline
    func touch(at nanoseconds: UInt64) { activity.store(nanoseconds, ordering: .relaxed) }

    static var endEvent: ServerSentEvent { ServerSentEvent(event: "end", data: "{\"reason\":\"session deleted\"}") }

    @usableFromInline
    func end() {
        let subscribers = shared.withLock { shared -> [Subscriber] in
            shared.ended = true
            shared.observation?.cancel()
            shared.observation = nil
            let subscribers = shared.subscribers.filter { !$0.closed }
            for subscriber in subscribers { subscriber.closed = true }
            context.metrics.subscribers.decrement(by: shared.subscribers.count)
            shared.subscribers = []
            return subscribers
        }
        runtime.stop()
        for subscriber in subscribers { subscriber.stream?.close(with: Self.endEvent) }
    }
}

/// The latest state's encodings for subscribers, made at most once per version.
@usableFromInline
final class EncodingCache: @unchecked Sendable {
    @usableFromInline let version: UInt64
    @usableFromInline var event: EncodedServerSentEvent?
    @usableFromInline var value: JSONValue?

    init(version: UInt64) { self.version = version }
}

extension Session.Shared {
    /// The cache for `version`, replacing one for an older version.
    mutating func cache(_ version: UInt64) -> EncodingCache {
        if let cache, cache.version == version { return cache }
        let fresh = EncodingCache(version: version)
        cache = fresh
        return fresh
    }
}

/// One SSE subscriber's delivery state; only touched under its session's lock.
@usableFromInline
final class Subscriber: @unchecked Sendable {
    @usableFromInline var stream: ServerSentEventStream?
    @usableFromInline let select: JSONPointer?
    @usableFromInline let selectText: String?
    @usableFromInline var lastSentVersion: UInt64?
    @usableFromInline var lastSelected: JSONValue?
    /// Its output buffer overflowed: states are skipped until it drains, then it gets the latest.
    @usableFromInline var behind = false
    @usableFromInline var pendingPulses: [EncodedServerSentEvent] = []
    @usableFromInline var drops = 0
    @usableFromInline var closed = false

    init(select: JSONPointer?, selectText: String?) {
        self.select = select
        self.selectText = selectText
    }
}
