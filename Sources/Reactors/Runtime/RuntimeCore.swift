import Synchronization

/// One unit of work for the runtime's serial drain, in arrival order.
@usableFromInline
enum WorkItem<R: Reactor>: Sendable {
    /// A sent action; `isTransformed` when it came from a merged source and already went through `transform(action:)`;
    /// `isStubbed` when stub mode was on as it was admitted (it is then recorded, not run).
    case action(R.Action, seq: UInt64, completion: ReactorRuntime<R>.Completion?, isTransformed: Bool, isStubbed: Bool)
    /// A mutation emitted by an effect (`token`) or a merged source (`isTransformed`); `resume` wakes the emitter.
    case mutation(R.Mutation, token: EffectToken?, isTransformed: Bool, resume: UnsafeContinuation<Void, Never>?)
    /// An own action a flow's step held and released: run it under its seq (`token` is the hold).
    case release(R.Action, token: EffectToken, resume: UnsafeContinuation<Void, Never>)
    /// A stub state to emit as a new version.
    case force(R.State, completion: ReactorRuntime<R>.Completion?)
    /// A new observer, to be handed the latest snapshot before any later one.
    case subscribe(ObserverBox<R.State>)
    /// The runtime stopped: finish every observer.
    case finish
}

/// Everything a runtime shares between threads, guarded by its one lock.
///
/// Kept small on purpose (an idle session must fit in a few hundred bytes): rarely used parts live in
/// `RuntimeExtras`, allocated on first use.
@usableFromInline
struct RuntimeCore<R: Reactor> {
    /// The accumulator `reduce` receives (before `transform(state:)`).
    @usableFromInline var state: R.State
    /// `transform(state:)` of `state`: what observers and `currentState` see.
    @usableFromInline var shown: R.State
    @usableFromInline var version: UInt64
    @usableFromInline var lastSeq: UInt64
    /// Work waiting for the thread that is draining.
    @usableFromInline var queue: ContiguousArray<WorkItem<R>> = []
    /// The drained batch's buffer, kept to avoid reallocating the queue on every batch.
    @usableFromInline var spare: ContiguousArray<WorkItem<R>> = []
    @usableFromInline var observers: ObserverList<R.State> = .empty
    @usableFromInline var extras: RuntimeExtras<R>?
    /// Where `schedule` / `cancelTimer` effects go in a hosted runtime (``ReactorRuntime/setTimerHost(_:)``): in the
    /// core, not the extras, so that an idle hosted session does not allocate them.
    weak var timerHost: (any ReactorTimerHost<R.Action>)?
    /// True while one thread owns the drain; everyone else only enqueues.
    @usableFromInline var isDraining = false
    @usableFromInline var isStopped = false
    @usableFromInline var isStubbed = false

    @usableFromInline init(state: R.State, shown: R.State, version: UInt64, lastSeq: UInt64) {
        self.state = state
        self.shown = shown
        self.version = version
        self.lastSeq = lastSeq
    }

    /// What the thread that takes over the drain works with.
    @inlinable func drainState() -> DrainState<R> {
        DrainState(
            state: state, shown: shown, version: version, isStubbed: isStubbed, isStopped: isStopped,
            middlewares: extras?.middlewares ?? [], vetters: extras?.vetters ?? 0)
    }

    /// The extras, allocated on first use.
    @usableFromInline mutating func ensureExtras() -> RuntimeExtras<R> {
        if let extras { return extras }
        let created = RuntimeExtras<R>()
        extras = created
        return created
    }
}

/// The parts of a runtime most sessions never use; only touched under the runtime's lock.
///
/// The three fields every action reads are `@exclusivity(unchecked)`: the lock already keeps their accesses
/// apart, and the run-time check the compiler otherwise emits for a class's `var` cost ~76 instructions per
/// read (three per action, callgrind).
@usableFromInline
final class RuntimeExtras<R: Reactor> {
    @exclusivity(unchecked) @usableFromInline var middlewares: [AnyMiddleware<R>] = []
    /// The middlewares whose `intercept` does something (`interceptsActions`), in order.
    @exclusivity(unchecked) @usableFromInline var interceptors: [AnyMiddleware<R>] = []
    /// Which of `middlewares` vet states (`vetsStates`): bit i for middleware i (the 64th and later
    /// share bit 63 and are asked). A mask, not a second array: the drain state copies it on every action.
    @exclusivity(unchecked) @usableFromInline var vetters: UInt64 = 0
    var errorHandler: (@Sendable (any Error) -> Void)?
    /// Where `schedule` / `cancelTimer` effects go (``ReactorRuntime/setTimerHandler(_:)``).
    var timerHandler: (@Sendable (TimerRequest<R.Action>, UInt64?) -> Void)?
    var stubbedActions: [R.Action] = []
    var stubRecordLimit = 1_000
    var effects: [ObjectIdentifier: EffectToken] = [:]
    /// The effects `stop()` cancelled, until `waitForStoppedEffectTasks()` takes them.
    var stoppedEffects: [EffectToken] = []
    var effectWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var nextWaiterID: UInt64 = 0
    var sourceTasks: [Task<Void, Never>] = []

    @usableFromInline init() {}
}

/// The drain's private copy of the state; only the draining thread writes the state, so it reads from here.
@usableFromInline
struct DrainState<R: Reactor>: Sendable {
    @usableFromInline var state: R.State
    @usableFromInline var shown: R.State
    @usableFromInline var version: UInt64
    @usableFromInline var isStubbed: Bool
    @usableFromInline var isStopped: Bool
    @usableFromInline var middlewares: [AnyMiddleware<R>]
    /// Which middlewares vet states (see `RuntimeExtras.vetters`).
    @usableFromInline var vetters: UInt64
    /// The action whose mutations are being reduced (nil for a merged source's mutation or a forced state).
    @usableFromInline var seq: UInt64?
    /// The first state a vetter refused since the caller last took it (`takeRefusal`). Boxed: the drain
    /// state is copied on every admission, and a reference is one word to copy where a rejection is four.
    @usableFromInline var refusal: StateRefusal?

    @inlinable init(
        state: R.State, shown: R.State, version: UInt64, isStubbed: Bool, isStopped: Bool,
        middlewares: [AnyMiddleware<R>], vetters: UInt64
    ) {
        self.state = state
        self.shown = shown
        self.version = version
        self.isStubbed = isStubbed
        self.isStopped = isStopped
        self.middlewares = middlewares
        self.vetters = vetters
    }

    /// The refusal noted since the last call, as the error an action's completion reports; clears it.
    @inlinable mutating func takeRefusal() -> ReactorError? {
        guard let refusal else { return nil }
        self.refusal = nil
        return .stateRefused(refusal.rejection)
    }

    @inlinable var snapshot: Snapshot<R.State> { Snapshot(version: version, state: shown) }
}

/// A vetter's refusal noted in the drain until the action's completion reports it.
@usableFromInline
final class StateRefusal: Sendable {
    @usableFromInline let rejection: ActionRejection

    @usableFromInline init(_ rejection: ActionRejection) { self.rejection = rejection }
}

/// What the reactor's `transform` hooks and state type ask of the runtime; nil for plain reactors.
@usableFromInline
final class Pipeline<R: Reactor>: Sendable {
    @usableFromInline let actionTransform: (@Sendable (R.Action) -> R.Action?)?
    @usableFromInline let mutationTransform: (@Sendable (R.Mutation) -> R.Mutation?)?
    @usableFromInline let pulses: PulseScanner?
    /// Stages, start elements and `flatMapLatest`; nil for flows of maps, filters and merges.
    @usableFromInline let flows: FlowRuntime<R>?
    /// What `start()` launches; nil once it has.
    let launch: Mutex<FlowLaunch<R>?>
    /// How many sources the flows merge.
    let mergedSourceCount: Int

    init(actionFlow: Flow<R.Action>, mutationFlow: Flow<R.Mutation>, pulses: PulseScanner?, isRestoring: Bool) {
        actionTransform = actionFlow.transform
        mutationTransform = mutationFlow.transform
        self.pulses = pulses
        let staged = actionFlow.hasStages || mutationFlow.hasStages
        let flows = staged ? FlowRuntime<R>(actionFlow: actionFlow, mutationFlow: mutationFlow) : nil
        self.flows = flows
        let launch = FlowLaunch<R>(
            actionFlow: actionFlow, mutationFlow: mutationFlow, flows: flows, isRestoring: isRestoring)
        mergedSourceCount = launch.actionSources.count + launch.mutationSources.count
        self.launch = Mutex(launch)
    }
}

/// What the lock decided for a caller that brought work.
@usableFromInline
enum Admission<R: Reactor>: Sendable {
    case refused(ReactorError)
    case queued
    /// The caller owns the drain now and must run it.
    case drain(DrainState<R>)
}

/// What the lock decided for an action being submitted (the drain state, when it is `.drain`, comes apart).
@usableFromInline
enum SubmitStep: Sendable {
    /// Run the middlewares' `intercept` first, then try again.
    case intercept
    /// The runtime stopped: refused.
    case stopped
    /// `queueLimit` items already wait for the thread that is draining: refused (`.busy`), no seq taken.
    case busy
    /// Queued behind the thread that is draining.
    case queued
    /// The caller owns the drain now and must run it.
    case drain
}

/// What the draining thread does next.
@usableFromInline
enum DrainStep: Sendable {
    /// Process the batch just taken from the queue.
    case process
    /// The queue is empty; the drain was given up.
    case idle
    /// The budget ran out with work left; the drain is still owned and continues in a task.
    case handOff
}
