import Synchronization

/// Runs one reactor instance: takes actions in arrival order, reduces serially, versions every state and
/// tells observers, without a task for synchronous effects.
///
/// ```swift
/// let runtime = ReactorRuntime(CounterReactor())
/// let token = runtime.observe { event in
///     if case .state(let snapshot, _) = event { print(snapshot.version, snapshot.state.value) }
/// }
/// try runtime.send(.increase)   // prints "0 0" at observe, then "1 1"
/// ```
/// Whichever thread finds the runtime idle runs the work inline ("drains"); others only enqueue, so
/// reduces and observer calls never overlap. Actions sent from an effect or an observer are queued, never
/// reduced recursively. A caller that has drained 4,096 items while others kept sending hands the rest
/// to a task, so no sender is held for long. Effects hold the runtime until they end; `stop()` ends them.
public final class ReactorRuntime<R: Reactor>: Sendable {
    /// Called when everything an action started has been reduced (or with why it was not).
    public typealias Completion = @Sendable (Result<Snapshot<R.State>, ReactorError>) -> Void

    // In this order, so that the flag and the limit fill the lock's tail padding: an idle runtime of a counter is
    // one 136-byte object (a 144-byte heap block; 152 and 160 with the limit an Int after the tracer).
    @usableFromInline let reactor: R
    @usableFromInline let core: Mutex<RuntimeCore<R>>
    /// The reactor's ``ReactorScheduler`` is `.workers`: its work never runs on the sender's thread.
    @usableFromInline let runsOnWorkers: Bool
    /// Most items that may wait for the draining thread before `send` refuses an action (`.busy`).
    @usableFromInline let queueLimit: UInt32
    @usableFromInline let pipeline: Pipeline<R>?
    /// Told before and after each call of the reactor's own code (see ``ReactorCallTracer``); nil: nobody.
    @usableFromInline let tracer: (any ReactorCallTracer)?

    /// Starts the reactor from its initial state, or from `checkpoint` (state, version and seq continue from there).
    /// With `start` false its flows wait for `start()` (their `startWith` elements, merged sources), so a
    /// host can add middlewares, and a debug handler, that must see everything the reactor does. `tracer` is
    /// told whenever the reactor's own code runs. `queueLimit` (0: none) bounds the work waiting while the
    /// reactor is busy: `send` throws ``ReactorError/busy(limit:)`` when that many items already wait.
    public init(
        _ reactor: R, restoring checkpoint: Checkpoint<R.State>? = nil, start: Bool = true,
        tracer: (any ReactorCallTracer)? = nil, queueLimit: Int = 0
    ) {
        self.reactor = reactor
        self.tracer = tracer
        runsOnWorkers = reactor.scheduler == .workers
        self.queueLimit = queueLimit > 0 ? UInt32(clamping: queueLimit) : .max
        let state = checkpoint?.state ?? reactor.initialState
        let version = checkpoint?.version ?? 0
        let shown = Self.traced(tracer, .transformState, seq: 0, version: version) { reactor.transform(state: state) }
        core = Mutex(RuntimeCore(state: state, shown: shown, version: version, lastSeq: checkpoint?.lastSeq ?? 0))
        let actionFlow = Self.traced(tracer, .transformAction, seq: 0, version: version) {
            reactor.transform(action: Flow())
        }
        let mutationFlow = Self.traced(tracer, .transformMutation, seq: 0, version: version) {
            reactor.transform(mutation: Flow())
        }
        let pulses = PulseScanner.scanner(for: R.State.self)
        if actionFlow.isIdentity, mutationFlow.isIdentity, pulses == nil {
            pipeline = nil
        } else {
            pipeline = Pipeline(
                actionFlow: actionFlow, mutationFlow: mutationFlow, pulses: pulses, isRestoring: checkpoint != nil)
        }
        pipeline?.flows?.link.set(self)
        if start { self.start() }
    }

    deinit {
        for task in core.withLock({ $0.extras?.sourceTasks ?? [] }) { task.cancel() }
    }

    /// Runs `body` (the reactor's own code) between `tracer`'s `willRun` and `didRun`.
    @inlinable
    static func traced<T>(
        _ tracer: (any ReactorCallTracer)?, _ call: ReactorCall, seq: UInt64, version: UInt64, _ body: () -> T
    ) -> T {
        guard let tracer else { return body() }
        tracer.willRun(call, seq: seq, version: version)
        let result = body()
        tracer.didRun()
        return result
    }

    /// `traced` with this runtime's tracer.
    @inlinable
    func traced<T>(_ call: ReactorCall, seq: UInt64?, version: UInt64, _ body: () -> T) -> T {
        Self.traced(tracer, call, seq: seq ?? 0, version: version, body)
    }

    /// Queues `action` (or runs it inline when idle) and returns its seq (1, 2, … continuing from a checkpoint).
    ///
    /// Middlewares' `intercept` runs first, on this thread, with the current state; a rejection throws
    /// `.rejected` and takes no seq. `completion` fires once every mutation the action produced, including
    /// those of its async effects, has been reduced, with the snapshot then (or `.stateRefused` when a
    /// middleware refused a state it produced); at once when stubbed. With `queueLimit` items already waiting
    /// for a busy reactor, it throws `.busy` and takes no seq.
    @inlinable @discardableResult
    public func send(_ action: R.Action, completion: Completion? = nil) throws(ReactorError) -> UInt64 {
        try submit(action, completion: completion).seq
    }

    /// `send`, also telling whether stub mode took the action (decided here, as the action is admitted).
    @inlinable
    public func submit(_ action: R.Action, completion: Completion? = nil) throws(ReactorError) -> ActionReceipt {
        var intercepted = false
        while true {
            var receipt = ActionReceipt(seq: 0, isStubbed: false)
            // The drain state comes out beside a plain step: a generic enum carrying it (and an error)
            // was copied and destroyed through its type's metadata, ~1,000 instructions per action.
            var owned: DrainState<R>?
            let step = core.withLock { core -> SubmitStep in
                if core.isStopped { return .stopped }
                if !intercepted, !core.isStubbed, let extras = core.extras, !extras.interceptors.isEmpty {
                    return .intercept
                }
                if core.isDraining, core.queue.count >= Int(queueLimit) { return .busy }
                core.lastSeq &+= 1
                receipt = ActionReceipt(seq: core.lastSeq, isStubbed: core.isStubbed)
                if core.isDraining {
                    core.queue.append(
                        .action(
                            action, seq: receipt.seq, completion: completion, isTransformed: false,
                            isStubbed: receipt.isStubbed))
                    return .queued
                }
                core.isDraining = true
                owned = core.drainState()
                return .drain
            }
            switch step {
            case .intercept:
                try intercept(action)
                intercepted = true
            case .stopped:
                throw .stopped
            case .busy:
                throw .busy(limit: Int(queueLimit))
            case .queued:
                return receipt
            case .drain:
                // Set under the lock together with `.drain`.
                var drain = owned.take()!
                if runsOnWorkers {
                    let item = WorkItem<R>.action(
                        action, seq: receipt.seq, completion: completion, isTransformed: false,
                        isStubbed: receipt.isStubbed)
                    _ = onWorkers(item, drain)
                } else {
                    // Straight to the action's processing: no work item to build and take apart.
                    process(
                        action: action, seq: receipt.seq, completion: completion, isTransformed: false,
                        isStubbed: receipt.isStubbed, &drain)
                    self.drain(&drain)
                }
                return receipt
            }
        }
    }

    /// Runs every middleware's `intercept` with the current state.
    @usableFromInline func intercept(_ action: R.Action) throws(ReactorError) {
        let interceptors = core.withLock { core -> ([AnyMiddleware<R>], R.State)? in
            guard let extras = core.extras, !extras.interceptors.isEmpty else { return nil }
            return (extras.interceptors, core.shown)
        }
        guard let (middlewares, state) = interceptors else { return }
        for middleware in middlewares {
            do {
                try middleware.intercept(action: action, state: state)
            } catch {
                throw .rejected(error)
            }
        }
    }

    /// The latest state as observers see it.
    @inlinable public var currentState: R.State { core.withLock { $0.shown } }
    /// The version of `currentState` (0 = initial state).
    @inlinable public var currentVersion: UInt64 { core.withLock { $0.version } }
    /// `currentState` with its version, read together.
    @inlinable public var currentSnapshot: Snapshot<R.State> {
        core.withLock { Snapshot(version: $0.version, state: $0.shown) }
    }
    /// What to persist to resume this runtime later with `init(_:restoring:)`.
    public var checkpoint: Checkpoint<R.State> {
        core.withLock { Checkpoint(state: $0.state, version: $0.version, lastSeq: $0.lastSeq) }
    }

    /// Calls `handler` with the latest snapshot (pulses: []), then with every later one, then `.finished` at stop.
    ///
    /// Handlers run synchronously on the thread that reduced, in version order, never concurrently for one
    /// runtime; they must not block. Keep the token: dropping it cancels the observation.
    public func observe(_ handler: @escaping @Sendable (StateEvent<R.State>) -> Void) -> ObservationToken {
        let box = ObserverBox(handler)
        _ = admit(.subscribe(box), refuseWhenStopped: false)
        return ObservationToken(box)
    }

    /// Adds a middleware after the existing ones.
    public func addMiddleware(_ middleware: some ReactorMiddleware<R>) {
        core.withLock { core in
            let extras = core.ensureExtras()
            let box = MiddlewareBox(middleware)
            extras.middlewares.append(box)
            if box.interceptsActions { extras.interceptors.append(box) }
            if box.vetsStates { extras.vetters |= 1 << min(extras.middlewares.count - 1, 63) }
        }
    }

    /// Receives the `schedule` / `cancelTimer` effects of the reactor with the seq of the action whose effect
    /// asked (nil outside an action); a host keeps the timers and sends their actions back when due.
    public func setTimerHandler(_ handler: @escaping @Sendable (TimerRequest<R.Action>, UInt64?) -> Void) {
        core.withLock { $0.ensureExtras().timerHandler = handler }
    }

    /// Hands the runtime's timer effects to `host` (held weakly; it outlives the runtime's work, a hosted session
    /// does). Takes the place of a handler set with ``setTimerHandler(_:)``.
    public func setTimerHost(_ host: any ReactorTimerHost<R.Action>) {
        core.withLock { $0.timerHost = host }
    }

    /// Hands a timer effect to the host (or the handler); without one, or with an action of another type, reports why.
    @usableFromInline
    func handleTimer(_ command: TimerCommand, seq: UInt64?) {
        let (host, handler) = core.withLock { ($0.timerHost, $0.extras?.timerHandler) }
        let deliver: (TimerRequest<R.Action>, UInt64?) -> Void
        if let host {
            deliver = { request, seq in host.handleTimer(request, seq: seq) }
        } else if let handler {
            deliver = handler
        } else {
            return report(
                TimerCommandError(
                    description: "timer \"\(command.name)\" was not kept: this runtime has no timer handler (a hosted "
                        + "session has one; elsewhere call setTimerHandler)"))
        }
        switch command {
        case .schedule(let name, let delay, let action):
            guard let action = action as? R.Action else {
                return report(
                    TimerCommandError(
                        description: "timer \"\(name)\" was not kept: its action is a \(type(of: action)), not the "
                            + "reactor's \(R.Action.self)"))
            }
            deliver(.schedule(name: name, delay: delay, action: action), seq)
        case .cancel(let name):
            deliver(.cancel(name: name), seq)
        }
    }

    /// Receives errors thrown by effects and merged sources (the runtime lives on).
    public func setErrorHandler(_ handler: @escaping @Sendable (any Error) -> Void) {
        core.withLock { $0.ensureExtras().errorHandler = handler }
    }

    /// Stub mode: actions are recorded (and logged by middlewares as stubbed) but neither `mutate` nor `reduce` runs.
    ///
    /// Unlike ReactorKit, enabling keeps the current state instead of resetting to the initial one: a live
    /// session watched by subscribers must never jump back. Enabling cancels every in-flight effect.
    public var isStubEnabled: Bool {
        // Inlinable: read on every action, and the unspecialized getter looks up generic metadata each call.
        @inlinable get { core.withLock { $0.isStubbed } }
        set {
            let running = core.withLock { core -> [EffectToken] in
                core.isStubbed = newValue
                guard newValue, let extras = core.extras else { return [] }
                return Array(extras.effects.values)
            }
            for token in running { token.cancel() }
        }
    }

    /// The actions received while stubbed, oldest first, at most `stubRecordLimit` of the latest.
    public var stubbedActions: [R.Action] { core.withLock { $0.extras?.stubbedActions ?? [] } }

    /// How many stubbed actions are kept (default 1,000); lowering it drops the oldest.
    public var stubRecordLimit: Int {
        get { core.withLock { $0.extras?.stubRecordLimit ?? 1_000 } }
        set {
            core.withLock { core in
                let extras = core.ensureExtras()
                extras.stubRecordLimit = max(0, newValue)
                extras.stubbedActions.removeFirst(max(0, extras.stubbedActions.count - extras.stubRecordLimit))
            }
        }
    }

    /// Emits `state` as a new version (even if equal to the current one); only while stubbed. Each of its
    /// `@Pulse` properties counts as assigned (its count continues from the current state's).
    /// `completion` gets the resulting snapshot once observers have seen it, or `.stateRefused` when a
    /// middleware refused the state (nothing changed).
    public func forceState(_ state: R.State, completion: Completion? = nil) throws(ReactorError) {
        let refusal = core.withLock { core -> ReactorError? in
            if core.isStopped { return .stopped }
            return core.isStubbed ? nil : .stubDisabled
        }
        if let refusal { throw refusal }
        guard admit(.force(state, completion: completion), refuseWhenStopped: true) else { throw .stopped }
    }

    /// How many effect tasks are running.
    public var inFlightEffectCount: Int { core.withLock { $0.extras?.effects.count ?? 0 } }

    /// Whether `transform(action:)` or `transform(mutation:)` merged outside sources; what they emit
    /// reaches only a running runtime.
    public var hasMergedSources: Bool { (pipeline?.mergedSourceCount ?? 0) > 0 && !isStopped }

    /// Returns once no effect task is running (every mutation they emitted has been reduced), or when the
    /// calling task is cancelled.
    public func waitForEffects() async {
        let id = core.withLock { core in
            let extras = core.ensureExtras()
            extras.nextWaiterID &+= 1
            return extras.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = core.withLock { core -> Bool in
                    guard let extras = core.extras, !extras.effects.isEmpty, !Task.isCancelled else { return true }
                    extras.effectWaiters[id] = continuation
                    return false
                }
                if idle { continuation.resume() }
            }
        } onCancel: {
            core.withLock { $0.extras?.effectWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// `waitForEffects()`, and then until the tasks of those effects (and of those `stop()` cancelled)
    /// have returned, not merely reduced their last mutation: what their closures captured is released
    /// by then, so a process that exits next leaves nothing of them behind. Returns early, like
    /// `waitForEffects()`, when the calling task is cancelled.
    public func waitForEffectTasks() async {
        let tokens = core.withLock { core -> [EffectToken] in
            guard let extras = core.extras else { return [] }
            defer { extras.stoppedEffects = [] }
            return Array(extras.effects.values) + extras.stoppedEffects
        }
        await waitForEffects()
        // Every one of them has handed in its last work: each returns at once.
        guard !Task.isCancelled else { return }
        for token in tokens { await token.wait() }
    }

    /// Cancels every in-flight effect and merged source, refuses later actions, and sends observers `.finished`.
    public func stop() {
        let work = core.withLock {
            core -> (tokens: [EffectToken], sources: [Task<Void, Never>], drain: DrainState<R>?)? in
            if core.isStopped { return nil }
            core.isStopped = true
            let tokens = core.extras.map { Array($0.effects.values) } ?? []
            core.extras?.stoppedEffects = tokens
            let sources = core.extras?.sourceTasks ?? []
            core.extras?.sourceTasks = []
            core.queue.append(.finish)
            if core.isDraining { return (tokens, sources, nil) }
            core.isDraining = true
            return (tokens, sources, core.drainState())
        }
        guard let work else { return }
        for token in work.tokens { token.cancel() }
        for task in work.sources { task.cancel() }
        pipeline?.flows?.actions?.stop()
        pipeline?.flows?.mutations?.stop()
        if var drain = work.drain { self.drain(&drain) }
    }

    /// True once `stop()` was called.
    public var isStopped: Bool { core.withLock { $0.isStopped } }
}
