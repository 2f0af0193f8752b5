import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a reactor's staged flows need while its runtime runs: the chains of stages, `flatMapLatest`, and
/// where `debug` lines go. Nil (in `Pipeline`) for flows of maps, filters and merges only.
@usableFromInline
final class FlowRuntime<R: Reactor>: Sendable {
    /// The stages of `transform(action:)`, after its leading transforms; nil when it has none.
    @usableFromInline let actions: FlowChain<R.Action>?
    /// The stages of `transform(mutation:)`, after its leading transforms; nil when it has none.
    @usableFromInline let mutations: FlowChain<R.Mutation>?
    /// `flatMapLatest()` was applied to the actions.
    @usableFromInline let switchesToLatest: Bool
    /// The last action that reached `mutate` under `flatMapLatest` (0: none); written by the drain only.
    let latestSeq = Atomic<UInt64>(0)
    /// The runtime, once made: the chains' holds and releases reach it through this, weakly.
    let link = RuntimeLink<R>()
    /// Where `debug` lines go.
    let debugSink = FlowDebugSink()
    /// Whether any chain has a `debug` stage.
    let hasDebugStages: Bool

    init(actionFlow: Flow<R.Action>, mutationFlow: Flow<R.Mutation>) {
        let link = link
        let debugSink = debugSink
        // A hold task goes on with the rest of its chain: a tracer hears of it as that transform's code.
        let environment = { (call: ReactorCall) in
            FlowEnvironment(
                hold: { ticket, body in link.runtime?.hold(ticket, call: call, body) },
                debug: { line in debugSink.write(line) })
        }
        let releaseAction: @Sendable (R.Action, any FlowHold) async -> Void = { action, hold in
            guard let token = hold as? EffectToken else { return }
            await link.runtime?.release(action, token: token)
        }
        let releaseMutation: @Sendable (R.Mutation, any FlowHold) async -> Void = { mutation, hold in
            guard let token = hold as? EffectToken else { return }
            await link.runtime?.emit(mutation, token: token, isTransformed: true)
        }
        actions =
            actionFlow.stages.isEmpty
            ? nil
            : FlowChain(actionFlow.stages, environment: environment(.transformAction), sink: releaseAction)
        mutations =
            mutationFlow.stages.isEmpty
            ? nil
            : FlowChain(mutationFlow.stages, environment: environment(.transformMutation), sink: releaseMutation)
        switchesToLatest = actionFlow.switchesToLatest
        hasDebugStages = actionFlow.hasDebugStages || mutationFlow.hasDebugStages
    }
}

/// What `start()` launches once: the start elements (fresh runtimes only) and the merged sources.
struct FlowLaunch<R: Reactor>: Sendable {
    var actionStarts: [(entry: Int, element: R.Action)]
    var mutationStarts: [(entry: Int, element: R.Mutation)]
    var actionSources: [Flow<R.Action>.Source]
    var mutationSources: [Flow<R.Mutation>.Source]

    /// The launch of `actionFlow` and `mutationFlow`, whose merged sources feed `flows`' chains where they entered.
    init(actionFlow: Flow<R.Action>, mutationFlow: Flow<R.Mutation>, flows: FlowRuntime<R>?, isRestoring: Bool) {
        actionStarts = isRestoring ? [] : actionFlow.starts
        mutationStarts = isRestoring ? [] : mutationFlow.starts
        actionSources = Self.sources(of: actionFlow, through: flows?.actions)
        mutationSources = Self.sources(of: mutationFlow, through: flows?.mutations)
    }

    /// The flow's merged sources, each running its elements through `chain` from where it was merged.
    static func sources<Element>(of flow: Flow<Element>, through chain: FlowChain<Element>?) -> [Flow<Element>.Source] {
        let entries = flow.sources.map { (0, $0) } + flow.stagedSources.map { ($0.entry, $0.source) }
        guard let chain else { return entries.map(\.1) }
        return entries.map { entry, source in
            { yield in
                try await source { element in
                    if case .passed(let passed) = chain.enter(element, at: entry, FlowTicket(seq: nil, outcome: nil)) {
                        await yield(passed)
                    }
                }
            }
        }
    }
}

/// The runtime a flow's chains belong to, set once it is made; held weakly, so a forgotten runtime is freed.
final class RuntimeLink<R: Reactor>: Sendable {
    private let weak = Mutex(WeakRuntime<R>?.none)

    var runtime: ReactorRuntime<R>? { weak.withLock { $0?.runtime } }

    func set(_ runtime: ReactorRuntime<R>) { weak.withLock { $0 = WeakRuntime(runtime) } }
}

/// Where a runtime's `debug` lines go: the handler set with `setDebugHandler`, else standard error.
final class FlowDebugSink: Sendable {
    let handler = Mutex<(@Sendable (FlowDebugLine) -> Void)?>(nil)

    func write(_ line: FlowDebugLine) {
        if let handler = handler.withLock({ $0 }) { return handler(line) }
        let text = Array("\(line)\n".utf8)
        _ = text.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// Marks the tasks that hold a flow's elements: `flatMapLatest` cancels effects, not held elements.
struct FlowHoldTag: Hashable, Sendable {
    static let id = EffectID(FlowHoldTag())
}

/// An effect token is what holds a flow's element.
extension EffectToken: FlowHold {
    @usableFromInline var ticket: FlowTicket { FlowTicket(seq: seq, outcome: outcome) }
}

extension Flow {
    /// Whether a `debug` stage is among the stages (the runtime then has lines to hand to its handler).
    var hasDebugStages: Bool {
        stages.contains { if case .debug = $0 { true } else { false } }
    }
}

// Staged flows in the runtime: actions and mutations through their chains, held elements as effects,
// flatMapLatest, start elements.
extension ReactorRuntime {
    /// Starts the flows: writes `debug` stages' "started", emits `startWith` elements (a fresh runtime
    /// only), then starts the merged sources. `init` calls it unless told not to (`start: false`), for a
    /// host that adds middlewares first so that they see the start elements; later calls do nothing.
    public func start() {
        guard let pipeline,
            let launch = pipeline.launch.withLock({ launch in
                defer { launch = nil }
                return launch
            })
        else { return }
        let flows = pipeline.flows
        flows?.actions?.start()
        flows?.mutations?.start()
        for (entry, action) in launch.actionStarts {
            guard let chain = flows?.actions else {
                admitMerged(action)
                continue
            }
            let outcome = traced(.transformAction, seq: nil, version: 0) {
                chain.enter(action, at: entry, FlowTicket(seq: nil, outcome: nil))
            }
            if case .passed(let passed) = outcome { admitMerged(passed) }
        }
        for (entry, mutation) in launch.mutationStarts {
            var mutation = mutation
            if let chain = flows?.mutations {
                let outcome = traced(.transformMutation, seq: nil, version: 0) {
                    chain.enter(mutation, at: entry, FlowTicket(seq: nil, outcome: nil))
                }
                guard case .passed(let passed) = outcome else { continue }
                mutation = passed
            }
            _ = admit(.mutation(mutation, token: nil, isTransformed: true, resume: nil), refuseWhenStopped: true)
        }
        startSources(actions: launch.actionSources, mutations: launch.mutationSources)
    }

    /// Receives the `debug` lines of this runtime's flows (default: standard error); a host sets it before
    /// `start()` to log them with the session they belong to.
    public func setDebugHandler(_ handler: @escaping @Sendable (FlowDebugLine) -> Void) {
        pipeline?.flows?.debugSink.handler.withLock { $0 = handler }
    }

    /// Whether the reactor's flows have a `debug` stage (so a host need not make a handler otherwise).
    public var hasDebugStages: Bool { pipeline?.flows?.hasDebugStages ?? false }

    /// Whether `start()` has `startWith` elements to emit.
    public var hasStartElements: Bool {
        pipeline?.launch.withLock { launch in
            launch.map { !$0.actionStarts.isEmpty || !$0.mutationStarts.isEmpty } ?? false
        } ?? false
    }

    /// Takes an action through the staged flow (unless it came from a merged source or a start element,
    /// which went through it already), then `flatMapLatest`, `mutate` and its effect. The completion waits
    /// for a held action until it goes on (or is dropped) and, since a mutation may be held too, always
    /// waits for the action's effects through a tracker.
    @usableFromInline
    func process(
        flowing action: R.Action, seq: UInt64, completion: Completion?, entersChain: Bool, _ flows: FlowRuntime<R>,
        _ drain: inout DrainState<R>
    ) {
        let tracker = completion.map { CompletionTracker($0) }
        var action = action
        if entersChain, let chain = flows.actions {
            let entered = traced(.transformAction, seq: seq, version: drain.version) {
                chain.enter(action, at: 0, FlowTicket(seq: seq, outcome: tracker))
            }
            switch entered {
            case .passed(let passed):
                action = passed
            case .dropped, .held:
                let snapshot = drain.snapshot
                tracker?.release { .success(snapshot) }
                return
            }
        }
        drain.seq = seq
        mutate(action, seq: seq, tracker: tracker, flows, &drain)
        if let refusal = drain.takeRefusal() { tracker?.fail(refusal) }
        let snapshot = drain.snapshot
        tracker?.release { .success(snapshot) }
    }

    /// Runs an action a held step released (its hold task `token` waits until this returns), unless
    /// that hold was cancelled meanwhile.
    @usableFromInline
    func process(released action: R.Action, token: EffectToken, _ drain: inout DrainState<R>) {
        guard !drain.isStopped, !drain.isStubbed, !token.isCancelled else { return }
        guard let flows = pipeline?.flows, let seq = token.seq else { return }
        drain.seq = seq
        mutate(action, seq: seq, tracker: token.outcome as? CompletionTracker<R.State>, flows, &drain)
        if let refusal = drain.takeRefusal() { token.outcome?.fail(refusal) }
    }

    /// `flatMapLatest`, then `mutate` and the effect it returns.
    func mutate(
        _ action: R.Action, seq: UInt64, tracker: CompletionTracker<R.State>?, _ flows: FlowRuntime<R>,
        _ drain: inout DrainState<R>
    ) {
        if flows.switchesToLatest {
            let previous = flows.latestSeq.exchange(seq, ordering: .relaxed)
            if previous != 0, previous != seq { cancelEffects(ofAction: previous) }
        }
        let effect = traced(.mutate, seq: seq, version: drain.version) {
            reactor.mutate(action: action, state: drain.shown)
        }
        run(effect, id: nil, tracker: tracker, &drain)
    }

    /// Cancels every running effect the action `seq` started (not the elements a flow holds for it).
    func cancelEffects(ofAction seq: UInt64) {
        let tokens = core.withLock { core -> [EffectToken] in
            core.extras?.effects.values.filter { $0.seq == seq && $0.id != FlowHoldTag.id } ?? []
        }
        for token in tokens { token.cancel() }
    }

    /// Hands an element a held step released to the drain: an own action (it has a seq) to run, anything
    /// else (a merged or start action) to be numbered and run like a merged one.
    func release(_ action: R.Action, token: EffectToken) async {
        guard token.seq != nil else { return admitMerged(action) }
        await withUnsafeContinuation { (resume: UnsafeContinuation<Void, Never>) in
            if !admit(.release(action, token: token, resume: resume), refuseWhenStopped: true) { resume.resume() }
        }
    }

    /// Starts the task that holds a flow's element for `ticket`'s action, registered as one of its effects;
    /// with a tracer, each stretch of the task (the rest of the chain, then the drain) is told to it as `call`.
    func hold(
        _ ticket: FlowTicket, call: ReactorCall, _ body: @escaping @Sendable (any FlowHold) async throws -> Void
    ) -> (any FlowHold)? {
        let context = ticket.seq.flatMap { seq in tracer?.context(forEffectOf: seq) }
        let token = EffectToken(
            id: FlowHoldTag.id, seq: ticket.seq, outcome: ticket.outcome as? ActionOutcome, tracer: tracer, call: call,
            context: context)
        let accepted = core.withLock { core -> Bool in
            if core.isStopped { return false }
            core.ensureExtras().effects[ObjectIdentifier(token)] = token
            return true
        }
        guard accepted else { return nil }
        let tracker = ticket.outcome as? CompletionTracker<R.State>
        tracker?.retain()
        token.attach(
            Task(executorPreference: token.executor) {
                do {
                    try await body(token)
                } catch {
                    self.reportUnlessCancelled(error, token: token)
                }
                self.finish(token, tracker: tracker)
            })
        return token
    }
}
