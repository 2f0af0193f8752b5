import JSONCodec
import Logs
import Reactors
import Synchronization
import Tokens

/// One session: a reactor runtime, its action log and its SSE subscribers.
///
/// The hot paths (`send`, publishing a state) are `@inlinable` so they are specialized for the
/// concrete reactor where it is registered; generic code across modules is many times slower.
@usableFromInline
final class Session<R: Reactor>: PersistentSession {
    @usableFromInline let id: String
    @usableFromInline let reactorName: String
    @usableFromInline let runtime: ReactorRuntime<InstrumentedReactor<R>>
    @usableFromInline let context: SessionContext
    /// Pins every call of this session's reactor code on it, for a crash record (see `SessionCallTracer`).
    @usableFromInline let tracer: SessionCallTracer
    /// Serializes accepting actions so the log is in `seq` order; never held while waiting.
    @usableFromInline let log: Mutex<ActionLog>
    /// The latest state and the subscribers; held while a state is fanned out, so a subscriber
    /// registers either before a version (and gets it) or after (and gets it as its first event).
    @usableFromInline let shared: Mutex<Shared>
    @usableFromInline let activity: Atomic<UInt64>
    /// Where this session is journaled; nil in memory-only mode.
    @usableFromInline let journal: SessionJournal?
    /// The ``StateLimit`` that refuses states over `sessions.maxStateBytes` and keeps the latest state's
    /// JSON, made by the first change (an action, a forced state; at once with merged sources): most
    /// sessions are only created or read, and it would cost each ~340 bytes (measured). The address of an
    /// owned reference (released in `deinit`), 0 until set, then never changed: `AtomicLazyReference`
    /// costs a generic library call of ~650 instructions per read (measured), this one atomic load.
    @usableFromInline let stateLimitPointer = Atomic<UInt>(0)
    /// Makes the state limit; built where the reactor type is known, so its hot paths are specialized.
    @usableFromInline let makeStateLimit: @Sendable (Session) -> StateLimit<InstrumentedReactor<R>>
    /// Hands each new state to the subscribers; built where the reactor type is known, since the observer
    /// starts in `subscribe`, which runs as generic code (~2,000 instructions a state more, measured).
    @usableFromInline let publisher: @Sendable (Session, StateEvent<R.State>) -> Void
    /// Set (under the shared lock) when the session leaves memory; requests that still hold it retry
    /// on the session loaded back.
    @usableFromInline let passivated = Atomic<Bool>(false)
    /// The pending timers its reactor scheduled (an empty table allocates nothing); see `Session+Timers.swift`.
    @usableFromInline let timers = Mutex(TimerTable())
    /// Its parameters as JSON (`"params"` at creation, as its reactor's parameter type encoded them); empty: none.
    @usableFromInline let params: [UInt8]

    @usableFromInline
    struct Shared {
        /// The latest state the observer delivered; valid once `observed` (the observer starts with the
        /// first subscriber: an idle session carries no observer, which is most of its memory).
        @usableFromInline var latest: Snapshot<R.State>
        @usableFromInline var subscribers = SubscriberList()
        @usableFromInline var observation: ObservationToken?
        // The flags last, packed together: this struct is part of every idle session.
        @usableFromInline var observed = false
        @usableFromInline var observing = false
        @usableFromInline var ended = false

        @inlinable
        init(latest: Snapshot<R.State>) { self.latest = latest }
    }

    @inlinable
    init(
        id: String, name: String, reactor: R, context: SessionContext, accessTokenHash: SessionTokenHash? = nil,
        restoring checkpoint: Checkpoint<R.State>? = nil, journal existing: SessionJournal? = nil,
        actions: [ActionLogEntry] = [], middlewares: [any ReactorMiddleware<R>] = [], params: [UInt8] = [],
        tracer: SessionCallTracer? = nil, attachContext: ((ReactorContextHost<R>) -> Void)? = nil
    ) {
        self.id = id
        self.params = params
        reactorName = name
        self.context = context
        let tracer = tracer ?? SessionCallTracer(session: id, reactor: name)
        self.tracer = tracer
        // Its flows start at the end, once the journal and the state limit watch what their start elements
        // and merged sources do.
        runtime = ReactorRuntime(
            InstrumentedReactor(reactor, context: context, tracer: tracer), restoring: checkpoint, start: false,
            tracer: tracer, queueLimit: context.limits.maxQueuedActions)
        // Setting it allocates the runtime's rarely used extras: only when it differs from the default.
        if runtime.stubRecordLimit != context.limits.stubRecordLimit {
            runtime.stubRecordLimit = context.limits.stubRecordLimit
        }
        var actionLog = ActionLog(limit: context.limits.actionLogLimit, byteLimit: context.limits.actionLogBytes)
        for entry in actions { actionLog.append(entry) }
        log = Mutex(actionLog)
        makeStateLimit = { session in
            StateLimit(limit: session.context.limits.maxStateBytes, context: session.context, tracer: session.tracer)
        }
        publisher = { session, event in
            guard case .state(let snapshot, let pulses) = event else { return }
            session.publish(snapshot, pulses: pulses)
        }
        journal =
            existing
            ?? Self.createJournal(
                id: id, name: name, runtime: runtime, context: context, accessTokenHash: accessTokenHash,
                params: params,
                tracer: tracer)
        shared = Mutex(Shared(latest: runtime.currentSnapshot))
        activity = Atomic(context.clock.monotonicNanoseconds())
        attachJournal()
        for middleware in middlewares { runtime.addMiddleware(HostedMiddleware(base: middleware, tracer: tracer)) }
        // What merged sources and start elements emit is reduced without an action: the limit must be there first.
        if runtime.hasMergedSources || runtime.hasStartElements { ensureStateLimit() }
        if runtime.hasDebugStages { runtime.setDebugHandler(Self.debugHandler(context.logger, sessionID: id)) }
        installTimerHandler()
        // Before the flows start: a start element's effect may already read the state or send an action.
        attachContext?(contextHost())
        runtime.start()
    }

    /// Logs the reactor's `Flow.debug` lines with the session they belong to.
    @usableFromInline
    static func debugHandler(_ logger: Logger, sessionID: String) -> @Sendable (FlowDebugLine) -> Void {
        { line in logger.info("flow \(line)", ["session": .string(sessionID), "flow": .string(line.label)]) }
    }

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: stateLimitPointer.load(ordering: .acquiring)) {
            Unmanaged<StateLimit<InstrumentedReactor<R>>>.fromOpaque(pointer).release()
        }
    }

    // MARK: Actions

    /// Decodes, logs, journals and queues an action; `encodeAction` writes the action log's JSON of it
    /// (specialized where the reactor was registered; without it the type is asked at run time). `timer` is the
    /// pending timer that sends it (taken from the table as its accept is journaled, one step: 0 is returned,
    /// nothing sent, when it is pending no more).
    @inlinable
    func send(
        actionBody: [UInt8], completion: (@Sendable (Result<EncodedSnapshot, SessionError>) -> Void)?,
        encodeAction: ((R.Action) throws -> [UInt8])?, timer: PendingTimer? = nil
    ) throws(SessionError) -> UInt64 {
        if let reason = journal?.unavailableReason { throw .storageUnavailable(reason) }
        let action: R.Action
        // What the log and the journal keep: the action as it decoded, not the body as sent.
        let json: [UInt8]
        // Whether the reactor takes the action from a client (`acceptsFromOutside`), asked in the same pinned call.
        var outside = true
        do {
            // The reactor's own Decodable (and Encodable, for the log) runs here: pinned on this session.
            (action, json) = try tracer.run(.decodeAction, action: actionBody) { () throws(ActionDecodingError) in
                let decoded = try decodeActionWithJSON(
                    R.Action.self, from: actionBody, parser: context.limits.bodyParser, encode: encodeAction)
                if timer == nil { outside = R.acceptsFromOutside(decoded.action) }
                return decoded
            }
        } catch {
            throw .invalidAction(error, reactor: reactorName)
        }
        if !outside { throw Self.refusedFromOutside(json, reactor: reactorName) }
        return try accept(action, json: json, origin: .request, completion: completion, timer: timer)
    }

    /// Logs, journals and queues a decoded action whose log JSON is `json`; its seq. `timer` is the pending timer
    /// that sends it (taken from the table as its accept is journaled, one step: 0, nothing sent, when it is
    /// pending no more).
    @inlinable
    func accept(
        _ action: R.Action, json: [UInt8], origin: ActionOrigin,
        completion: (@Sendable (Result<EncodedSnapshot, SessionError>) -> Void)?, timer: PendingTimer? = nil
    ) throws(SessionError) -> UInt64 {
        if let journal, json.count > journal.maxActionBytes {
            throw .actionTooLarge(bytes: json.count, limit: journal.maxActionBytes)
        }
        let at = context.clock.wallNanoseconds()
        let seq: UInt64
        do {
            // When the runtime runs the action inline on this thread, a crash in it keeps its JSON.
            seq = try SessionCallTracer.sending(json) { () throws(ReactorError) -> UInt64 in
                try log.withLock { (log: inout ActionLog) throws(ReactorError) -> UInt64 in
                    if let timer, !takeTimer(timer) { return 0 }
                    ensureStateLimit()
                    // The receipt says whether stub mode took the action, decided by the runtime as it admitted
                    // it: the log records what really happens to it, however long it waits in the queue.
                    let receipt: ActionReceipt
                    if let journal {
                        // A reactor that reduces as the action is submitted journals the mutation first:
                        // it and the accept go to the backend together.
                        journal.holdPublishes()
                        defer { journal.releasePublishes() }
                        let ticket = ActionTicket(journal: journal)
                        if let completion {
                            receipt = try runtime.submit(action) { [weak self] result in
                                journal.ended(ticket, result)
                                guard let self else { return completion(.failure(.ended)) }
                                completion(self.encoded(result))
                            }
                        } else {
                            // No caller waits: no weak reference to take and load on every action.
                            receipt = try runtime.submit(action) { result in ticket.ended(result) }
                        }
                        log.append(
                            ActionLogEntry(
                                seq: receipt.seq, at: at, action: json, stubbed: receipt.isStubbed, origin: origin,
                                timer: timer?.name))
                        journal.accepted(
                            ticket, seq: receipt.seq, at: at, stubbed: receipt.isStubbed, origin: origin, body: json,
                            timer: timer?.name)
                        if journal.isSnapshotDue { writeSnapshot(&log, passivating: false) }
                        return receipt.seq
                    }
                    if let completion {
                        receipt = try runtime.submit(action) { [weak self] result in
                            guard let self else { return completion(.failure(.ended)) }
                            completion(self.encoded(result))
                        }
                    } else {
                        receipt = try runtime.submit(action)
                    }
                    log.append(
                        ActionLogEntry(
                            seq: receipt.seq, at: at, action: json, stubbed: receipt.isStubbed, origin: origin,
                            timer: timer?.name))
                    return receipt.seq
                }
            }
        } catch {
            if case .stopped = error, passivated.load(ordering: .acquiring) { throw .passivated }
            if case .busy = error { context.metrics.actionsRefusedBusy.increment() }
            throw .reactor(error)
        }
        context.metrics.actionsAccepted.increment()
        return seq
    }

    @inlinable
    func encoded(_ result: Result<Snapshot<R.State>, ReactorError>) -> Result<EncodedSnapshot, SessionError> {
        switch result {
        case .success(let snapshot):
            do {
                let state = try json(of: snapshot.state, version: snapshot.version)
                return .success(EncodedSnapshot(version: snapshot.version, state: state))
            } catch {
                return .failure(.failed("the state of version \(snapshot.version) does not encode as JSON: \(error)"))
            }
        case .failure(let error):
            return .failure(.reactor(error))
        }
    }

    @usableFromInline
    func snapshot() -> EncodedSnapshot {
        let latest = runtime.currentSnapshot
        return (try? encoded(.success(latest)).get())
            ?? EncodedSnapshot(version: latest.version, state: Array("null".utf8))
    }

    // MARK: Admin

    @usableFromInline
    var isStubEnabled: Bool { runtime.isStubEnabled }

    @usableFromInline
    func setStub(enabled: Bool) {
        // Under the log lock: between two actions as the log records them, and a snapshot written here
        // sees the flag with the log as it stands.
        log.withLock { log in
            runtime.isStubEnabled = enabled
            // The stub flag lives in snapshots, so a restart keeps it.
            if journal != nil { writeSnapshot(&log, passivating: false) }
        }
    }

    @usableFromInline
    func forceState(json: [UInt8], reply: @escaping @Sendable (Result<EncodedSnapshot, SessionError>) -> Void) {
        if let reason = journal?.unavailableReason { return reply(.failure(.storageUnavailable(reason))) }
        let state: R.State
        do {
            var decoder = JSONValueDecoder()
            decoder.parser = context.limits.bodyParser
            state = try tracer.run(.decodeState, version: runtime.currentVersion &+ 1) {
                try decoder.decode(R.State.self, from: json)
            }
        } catch {
            return reply(.failure(.invalidState(reactor: reactorName, detail: "\(error)")))
        }
        log.withLock { _ in _ = ensureStateLimit() }
        do {
            // The runtime vets the forced state like a reduced one: over sessions.maxStateBytes it is refused.
            try runtime.forceState(state) { [weak self] result in
                guard let self else { return reply(.failure(.ended)) }
                if case .success = result { self.context.metrics.statesEmitted.increment() }
                reply(self.encoded(result))
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

    @usableFromInline
    func end() {
        end(with: .deleted)
    }

    /// Another process runs the session now: requests still holding it look it up again, and its
    /// subscribers reconnect (to wherever it runs) with their `Last-Event-ID`.
    @usableFromInline
    func endMoved(_ reason: String) {
        passivated.store(true, ordering: .releasing)
        end(with: .moved("the session moved to another instance (\(reason)); reconnect to follow it"))
    }

    /// Stops the runtime and ends every subscription with `end`.
    func end(with end: SubscriptionEnd) {
        let subscribers = shared.withLock { shared -> [Subscriber] in
            shared.ended = true
            shared.observation?.cancel()
            shared.observation = nil
            return shared.subscribers.removeAll(reporting)
        }
        runtime.stop()
        SubscriberList.finish(subscribers, end)
    }
}
