// Asynchronous effects and merged sources: each runs in its own task and hands mutations to the drain.
extension ReactorRuntime {
    /// Starts a task for `effect`, registered (under `id`) so stop, stub and `cancel(id:)` can cancel it;
    /// `seq` is the action that started it, `parent` the effect it starts from (a tracer's context carries on).
    @usableFromInline @discardableResult
    func spawn(
        _ effect: Effect<R.Mutation>, id: EffectID?, seq: UInt64?, tracker: CompletionTracker<R.State>?,
        parent: EffectToken? = nil
    ) -> EffectToken? {
        var context: (any AnyObject & Sendable)?
        if let tracer {
            if let parent { context = parent.context } else if let seq { context = tracer.context(forEffectOf: seq) }
        }
        let token = EffectToken(id: id, seq: seq, outcome: tracker, tracer: tracer, context: context)
        let accepted = core.withLock { core -> Bool in
            if core.isStopped { return false }
            core.ensureExtras().effects[ObjectIdentifier(token)] = token
            return true
        }
        guard accepted else { return nil }
        tracker?.retain()
        token.attach(
            Task(executorPreference: token.executor) {
                do {
                    try await self.perform(effect, token: token, tracker: tracker)
                } catch {
                    self.reportUnlessCancelled(error, token: token)
                }
                self.finish(token, tracker: tracker)
            })
        return token
    }

    /// Runs `effect` inside an effect task; synchronous parts emit and wait like `run` would.
    func perform(_ effect: Effect<R.Mutation>, token: EffectToken, tracker: CompletionTracker<R.State>?) async throws {
        switch effect.kind {
        case .none:
            return
        case .just(let mutation):
            await emit(mutation, token: token)
        case .concat(let effects):
            for effect in effects {
                try Task.checkCancellation()
                try await perform(effect, token: token, tracker: tracker)
            }
        case .merge(let effects):
            await withTaskGroup(of: Void.self) { group in
                for effect in effects {
                    group.addTask {
                        do {
                            try await self.perform(effect, token: token, tracker: tracker)
                        } catch {
                            self.reportUnlessCancelled(error, token: token)
                        }
                    }
                }
            }
        case .run(let operation):
            try await operation(Emitter { mutation in await self.emit(mutation, token: token) })
        case .delay(let effect, let duration, let clock):
            try await clock.sleep(for: duration)
            try await perform(effect, token: token, tracker: tracker)
        case .cancellable(let effect, let id, let cancelInFlight):
            if cancelInFlight { cancelEffects(id: id) }
            guard let child = spawn(effect, id: id, seq: token.seq, tracker: tracker, parent: token) else { return }
            await withTaskCancellationHandler {
                await child.wait()
            } onCancel: {
                child.cancel()
            }
        case .cancel(let id):
            cancelEffects(id: id)
        case .timer(let command):
            handleTimer(command, seq: token.seq)
        }
    }

    /// Hands `mutation` to the drain and returns once it is reduced (or dropped: cancelled effect, stopped runtime).
    func emit(_ mutation: R.Mutation, token: EffectToken?, isTransformed: Bool = false) async {
        if token?.isCancelled ?? false { return }
        await withUnsafeContinuation { (resume: UnsafeContinuation<Void, Never>) in
            let item = WorkItem<R>.mutation(mutation, token: token, isTransformed: isTransformed, resume: resume)
            if !admit(item, refuseWhenStopped: true) { resume.resume() }
        }
    }

    /// Cancels every running effect tagged `id`.
    @usableFromInline
    func cancelEffects(id: EffectID) {
        let tokens = core.withLock { core -> [EffectToken] in
            core.extras?.effects.values.filter { $0.id == id } ?? []
        }
        for token in tokens { token.cancel() }
    }

    /// Unregisters a finished effect task, wakes `waitForEffects` callers, and completes its action if last.
    func finish(_ token: EffectToken, tracker: CompletionTracker<R.State>?) {
        let waiters = core.withLock { core -> [CheckedContinuation<Void, Never>] in
            guard let extras = core.extras else { return [] }
            extras.effects[ObjectIdentifier(token)] = nil
            guard extras.effects.isEmpty else { return [] }
            defer { extras.effectWaiters = [:] }
            return Array(extras.effectWaiters.values)
        }
        tracker?.release { [self] in
            core.withLock { core in
                core.isStopped ? .failure(.stopped) : .success(Snapshot(version: core.version, state: core.shown))
            }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Tells middlewares and the error handler that an effect or source threw, unless it was cancelled.
    func reportUnlessCancelled(_ error: any Error, token: EffectToken?) {
        if error is CancellationError || (token?.isCancelled ?? false) { return }
        report(error)
    }

    /// Tells the reactor, middlewares and the error handler about `error`.
    func report(_ error: any Error) {
        let (middlewares, handler) = core.withLock { core in
            (core.extras?.middlewares ?? [], core.extras?.errorHandler)
        }
        reactor.effectDidFail(error)
        for middleware in middlewares { middleware.didFail(error: error) }
        handler?(error)
    }

    /// Starts one task per merged source; they hold the runtime weakly and end at stop or deinit.
    func startSources(actions: [Flow<R.Action>.Source], mutations: [Flow<R.Mutation>.Source]) {
        guard !actions.isEmpty || !mutations.isEmpty else { return }
        var tasks: [Task<Void, Never>] = []
        let weak = WeakRuntime(self)
        // With a tracer, the sources' jobs are told to it as the reactor's code (their tasks hold it).
        let executor = EffectToken(id: nil, seq: nil, outcome: nil, tracer: tracer, call: .source).executor
        for source in actions {
            tasks.append(
                Task(executorPreference: executor) {
                    do {
                        try await source { action in
                            weak.runtime?.admitMerged(action)
                        }
                    } catch {
                        weak.runtime?.reportUnlessCancelled(error, token: nil)
                    }
                })
        }
        for source in mutations {
            tasks.append(
                Task(executorPreference: executor) {
                    do {
                        try await source { mutation in
                            await weak.runtime?.emit(mutation, token: nil, isTransformed: true)
                        }
                    } catch {
                        weak.runtime?.reportUnlessCancelled(error, token: nil)
                    }
                })
        }
        core.withLock { $0.ensureExtras().sourceTasks = tasks }
    }

    /// Queues an action from a merged source (already transformed, not intercepted), numbering it in arrival order.
    func admitMerged(_ action: R.Action) {
        var seq: UInt64 = 0
        var isStubbed = false
        let admission = core.withLock { core -> Admission<R> in
            if core.isStopped { return .refused(.stopped) }
            core.lastSeq &+= 1
            seq = core.lastSeq
            isStubbed = core.isStubbed
            if core.isDraining {
                core.queue.append(.action(action, seq: seq, completion: nil, isTransformed: true, isStubbed: isStubbed))
                return .queued
            }
            core.isDraining = true
            return .drain(core.drainState())
        }
        if case .drain(var drain) = admission {
            let item = WorkItem<R>.action(action, seq: seq, completion: nil, isTransformed: true, isStubbed: isStubbed)
            if runsOnWorkers {
                _ = onWorkers(item, drain)
            } else {
                process(item, &drain)
                self.drain(&drain)
            }
        }
    }
}

/// A weak reference merged sources hold, so a forgotten runtime is freed (its deinit cancels them).
struct WeakRuntime<R: Reactor>: Sendable {
    weak var runtime: ReactorRuntime<R>?
    init(_ runtime: ReactorRuntime<R>) { self.runtime = runtime }
}
