import Synchronization

// The serial drain: whichever thread finds the runtime idle processes work until the queue is empty.
extension ReactorRuntime {
    /// Queues `item`, or processes it inline (and everything queued meanwhile) when the runtime is idle.
    /// Returns false, doing nothing, when the runtime is stopped and `refuseWhenStopped`.
    @inlinable
    func admit(_ item: WorkItem<R>, refuseWhenStopped: Bool) -> Bool {
        let admission = core.withLock { core -> Admission<R> in
            if refuseWhenStopped, core.isStopped { return .refused(.stopped) }
            if core.isDraining {
                core.queue.append(item)
                return .queued
            }
            core.isDraining = true
            return .drain(core.drainState())
        }
        switch admission {
        case .refused: return false
        case .queued: return true
        case .drain(var drain):
            if runsOnWorkers { return onWorkers(item, drain) }
            process(item, &drain)
            self.drain(&drain)
            return true
        }
    }

    /// Processes `item` and whatever is queued behind it on the worker pool, for a `.workers` reactor: this
    /// thread returns at once. The caller owns the drain. (The inline path stays at the call sites: passing the
    /// drain state through a function costs a copy and its retains on every action.)
    @inlinable
    func onWorkers(_ item: WorkItem<R>, _ drain: DrainState<R>) -> Bool {
        Task(executorPreference: ReactorScheduler.workerPool) {
            var drain = drain
            self.process(item, &drain)
            self.drain(&drain)
        }
        return true
    }

    /// How many items one caller drains before handing the rest to a task, so that a sender (an event loop)
    /// is never held hostage by a queue other threads keep filling.
    @inlinable static var drainBudget: Int { 4_096 }

    /// Processes queued work in batches until the queue is empty, then gives up the drain.
    @inlinable
    func drain(_ drain: inout DrainState<R>) {
        var batch = ContiguousArray<WorkItem<R>>()
        var processed = 0
        while true {
            let overBudget = processed >= Self.drainBudget
            let next = core.withLock { core -> DrainStep in
                if core.queue.isEmpty || overBudget {
                    if batch.capacity > core.spare.capacity { swap(&batch, &core.spare) }
                    // Over budget with work left, this thread keeps owning the drain and passes it to a task.
                    if core.queue.isEmpty {
                        core.isDraining = false
                        return .idle
                    }
                    return .handOff
                }
                if batch.capacity == 0 { swap(&batch, &core.spare) }
                swap(&batch, &core.queue)
                // Stub, stop and middlewares may have changed while this thread was busy.
                drain.isStubbed = core.isStubbed
                drain.isStopped = drain.isStopped || core.isStopped
                drain.middlewares = core.extras?.middlewares ?? []
                drain.vetters = core.extras?.vetters ?? 0
                return .process
            }
            switch next {
            case .idle:
                return
            case .handOff:
                handOff(drain)
                return
            case .process:
                processed += batch.count
                for item in batch { process(item, &drain) }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Continues a drain this thread still owns in a new task, once the budget ran out but the queue did not.
    @inlinable
    func handOff(_ drain: DrainState<R>) {
        Task(executorPreference: runsOnWorkers ? ReactorScheduler.workerPool : EffectExecutor.shared) {
            var drain = drain
            self.drain(&drain)
        }
    }

    /// Runs one unit of work on the draining thread.
    @inlinable
    func process(_ item: WorkItem<R>, _ drain: inout DrainState<R>) {
        switch item {
        case .action(let action, let seq, let completion, let isTransformed, let isStubbed):
            process(
                action: action, seq: seq, completion: completion, isTransformed: isTransformed, isStubbed: isStubbed,
                &drain)
        case .mutation(let mutation, let token, let isTransformed, let resume):
            if !drain.isStopped, !drain.isStubbed, !(token?.isCancelled ?? false) {
                drain.seq = token?.seq
                apply(mutation, isTransformed: isTransformed, outcome: token?.outcome, &drain)
                if let refusal = drain.takeRefusal() { token?.outcome?.fail(refusal) }
            }
            resume?.resume()
        case .release(let action, let token, let resume):
            process(released: action, token: token, &drain)
            resume.resume()
        case .force(let state, let completion):
            guard !drain.isStopped else {
                completion?(.failure(.stopped))
                return
            }
            drain.seq = nil
            force(state, &drain)
            if let refusal = drain.takeRefusal() {
                completion?(.failure(refusal))
            } else {
                completion?(.success(drain.snapshot))
            }
        case .subscribe(let observer):
            if drain.isStopped {
                observer.deliver(.state(drain.snapshot, pulses: []))
                observer.deliver(.finished)
            } else {
                core.withLock { $0.observers.append(observer) }
                observer.deliver(.state(drain.snapshot, pulses: []))
            }
        case .finish:
            drain.isStopped = true
            let observers = core.withLock { core in
                defer { core.observers = .empty }
                return core.observers
            }
            _ = observers.deliver(.finished)
        }
    }

    /// Takes one action: log it, then (unless stub mode took it when it was admitted) transform, mutate,
    /// and run its effect.
    @inlinable
    func process(
        action: R.Action, seq: UInt64, completion: Completion?, isTransformed: Bool, isStubbed: Bool,
        _ drain: inout DrainState<R>
    ) {
        if drain.isStopped {
            completion?(.failure(.stopped))
            return
        }
        for middleware in drain.middlewares { middleware.didAccept(action: action, seq: seq, isStubbed: isStubbed) }
        if isStubbed {
            recordStubbed(action)
            completion?(.success(drain.snapshot))
            return
        }
        var action = action
        if !isTransformed, let transform = pipeline?.actionTransform {
            let transformed = traced(.transformAction, seq: seq, version: drain.version) { transform(action) }
            guard let transformed else {
                completion?(.success(drain.snapshot))
                return
            }
            action = transformed
        }
        if let flows = pipeline?.flows {
            let entersChain = !isTransformed
            return process(flowing: action, seq: seq, completion: completion, entersChain: entersChain, flows, &drain)
        }
        let effect = traced(.mutate, seq: seq, version: drain.version) {
            reactor.mutate(action: action, state: drain.shown)
        }
        drain.seq = seq
        if effect.isSynchronous {
            run(effect, id: nil, tracker: nil, &drain)
            if let refusal = drain.takeRefusal() {
                completion?(.failure(refusal))
            } else {
                completion?(.success(drain.snapshot))
            }
        } else {
            let tracker = completion.map { CompletionTracker($0) }
            run(effect, id: nil, tracker: tracker, &drain)
            if let refusal = drain.takeRefusal() { tracker?.fail(refusal) }
            let snapshot = drain.snapshot
            tracker?.release { .success(snapshot) }
        }
    }

    /// Runs the synchronous parts of `effect` inline and starts a task for each asynchronous part.
    @inlinable
    func run(
        _ effect: Effect<R.Mutation>, id: EffectID?, tracker: CompletionTracker<R.State>?, _ drain: inout DrainState<R>
    ) {
        switch effect.kind {
        case .none:
            break
        case .just(let mutation):
            apply(mutation, isTransformed: false, outcome: tracker, &drain)
        case .concat(let effects):
            for index in effects.indices {
                let effect = effects[index]
                if effect.isSynchronous {
                    run(effect, id: id, tracker: tracker, &drain)
                } else {
                    // The rest must wait for this asynchronous part, so it all continues in one task.
                    spawn(
                        Effect(.concat(Array(effects[index...])), isSynchronous: false), id: id, seq: drain.seq,
                        tracker: tracker)
                    return
                }
            }
        case .merge(let effects):
            for effect in effects { run(effect, id: id, tracker: tracker, &drain) }
        case .run, .delay:
            spawn(effect, id: id, seq: drain.seq, tracker: tracker)
        case .cancellable(let effect, let newID, let cancelInFlight):
            if cancelInFlight { cancelEffects(id: newID) }
            run(effect, id: newID, tracker: tracker, &drain)
        case .cancel(let cancelled):
            cancelEffects(id: cancelled)
        case .timer(let command):
            handleTimer(command, seq: drain.seq)
        }
    }

    /// Keeps a stubbed action, dropping the oldest beyond the limit.
    @usableFromInline
    func recordStubbed(_ action: R.Action) {
        core.withLock { core in
            let extras = core.ensureExtras()
            guard extras.stubRecordLimit > 0 else { return }
            if extras.stubbedActions.count >= extras.stubRecordLimit {
                extras.stubbedActions.removeFirst(extras.stubbedActions.count - extras.stubRecordLimit + 1)
            }
            extras.stubbedActions.append(action)
        }
    }
}
