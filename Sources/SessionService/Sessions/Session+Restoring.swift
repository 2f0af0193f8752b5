import JSONCodec
import Logs
import Reactors
import Synchronization

// How a session comes back from its stored history, and how a past version is rebuilt.
extension Session {
    /// Rebuilds a session from its stored history: decodes the snapshot (with its pulse counts) and replays
    /// the tail through the reactor's own `reduce`, as the runtime did, migrating what an earlier version of
    /// the reactor stored (``StoredTypes``). Throws the reason it cannot (the session is then quarantined).
    @inlinable
    static func restore(
        id: String, name: String, reactor: R, template: JSONValue, context: SessionContext, history: StoredHistory,
        journal: SessionJournal, middlewares: [any ReactorMiddleware<R>] = [], tracer: SessionCallTracer? = nil,
        attachContext: ((ReactorContextHost<R>) -> Void)? = nil
    ) throws(RestoreError) -> Session {
        // Replaying the history runs the reactor's code: a crash in it is pinned on this session.
        let tracer = tracer ?? SessionCallTracer(session: id, reactor: name)
        let restored = try restoredParts(
            name: name, reactor: reactor, template: template, history: history, journal: journal, tracer: tracer)
        // Made here, where the reactor type is known: what the session builds for itself (its state limit)
        // is then specialized for it.
        let session = Session(
            id: id, name: name, reactor: reactor, context: context, restoring: restored.checkpoint, journal: journal,
            actions: restored.actions, middlewares: middlewares, params: history.params, tracer: tracer,
            attachContext: attachContext)
        if restored.isStubbed { session.runtime.isStubEnabled = true }
        session.restoreTimers(history.timers, serial: history.timerSerial)
        if restored.recovered { session.storeRecoveredState() }
        return session
    }

    /// Journals the snapshot that stores what recovering interrupted actions made: those versions have no
    /// records of their own, so it must come before any new version (until it is stored, a restart recovers
    /// again from scratch).
    @usableFromInline
    func storeRecoveredState() {
        guard !log.withLock({ writeSnapshot(&$0, passivating: false) }) else { return }
        context.logger.critical(
            "the state after recovering interrupted actions cannot be stored; a later restart recovers them again",
            ["session": .string(id)])
        journal?.requireSnapshot()
    }

    /// The state and version a stored history's snapshot and state records lead to, read by `types`.
    /// Replaying runs the reactor's code (migrations, `reduce`): each call is pinned on the session by `tracer`.
    /// Without `reducing`, the records are only decoded (and migrated): `reduce` does not run.
    static func storedState(
        _ history: StoredHistory, types: inout StoredTypes<R>, tracer: SessionCallTracer, reducing: Bool = true
    ) throws(RestoreError) -> (R.State, UInt64) {
        let snapshot = history.snapshot
        var state: R.State
        do {
            state = try tracer.run(.decodeState, version: snapshot.version) {
                try types.state(snapshot.state, storageVersion: snapshot.storageVersion)
            }
        } catch {
            throw RestoreError(
                reason: types.reason(
                    "its snapshot at version \(snapshot.version)", storageVersion: snapshot.storageVersion, error))
        }
        Pulses.restore(snapshot.pulses, into: &state)
        var version = snapshot.version
        for record in history.states {
            do {
                let before = state
                if reducing {
                    state = try tracer.run(.replay, version: record.version) { try types.replay(record, onto: before) }
                } else {
                    try tracer.run(.decodeState, version: record.version) { try types.decode(record) }
                }
            } catch {
                let kind = record.kind == .mutation ? "mutation" : "forced state"
                let what = "its stored \(kind) of version \(record.version)"
                throw RestoreError(reason: types.reason(what, storageVersion: record.storageVersion, error))
            }
            version = record.version
        }
        return (state, version)
    }

    /// Whether a stored history loads with this reactor, and what had to be made of it (`verify`); nothing is
    /// run but decoding, migrations and, when `reducing`, `reduce`.
    @usableFromInline
    static func check(
        reactor: R, id: String, name: String, template: JSONValue, history: StoredHistory, reducing: Bool
    ) -> Result<LoadReport, RestoreError> {
        var types = StoredTypes(reactor: reactor, name: name, template: template)
        let tracer = SessionCallTracer(session: id, reactor: name)
        do throws(RestoreError) {
            _ = try storedState(history, types: &types, tracer: tracer, reducing: reducing)
            return .success(types.report)
        } catch {
            return .failure(error)
        }
    }

    /// The checkpoint a stored history leads to, its action log and whether it was in stub mode.
    @usableFromInline
    static func restoredParts(
        name: String, reactor: R, template: JSONValue, history: StoredHistory, journal: SessionJournal,
        tracer: SessionCallTracer
    ) throws(RestoreError) -> (
        checkpoint: Checkpoint<R.State>, actions: [ActionLogEntry], isStubbed: Bool, recovered: Bool
    ) {
        var types = StoredTypes(reactor: reactor, name: name, template: template)
        var (state, version) = try storedState(history, types: &types, tracer: tracer)
        if types.report.isMigrated {
            journal.logger.notice(
                "a stored session was migrated as it loaded; its next snapshot is in the reactor's current storage "
                    + "version",
                ["session": .string(journal.id), "reactor": .string(name), "migration": .string(types.report.summary)])
        }
        let interrupted = history.actions.filter(\.interrupted)
        journal.noteInterrupted(interrupted.map(\.seq))
        let before = version
        // In stub mode nothing runs: recovery waits for a load with stub mode off.
        if !history.snapshot.stub {
            for entry in interrupted where entry.seq > history.snapshot.recoveredThrough {
                recover(
                    entry, reactor: reactor, name: name, state: &state, version: &version, logger: journal.logger,
                    tracer: tracer)
            }
            journal.recoveredThrough.store(history.lastSeq, ordering: .relaxed)
        } else {
            journal.recoveredThrough.store(history.snapshot.recoveredThrough, ordering: .relaxed)
        }
        let checkpoint = Checkpoint(state: state, version: version, lastSeq: history.lastSeq)
        return (checkpoint, history.actions, history.snapshot.stub, version != before)
    }

    /// Reduces what the reactor's `recover(interrupted:state:)` makes of one interrupted action, each
    /// mutation a version; an action that no longer decodes is left alone (logged). All of it is the
    /// reactor's code, pinned on the session (`tracer`) with the action's seq and JSON: a crash in it
    /// quarantines the session instead of crashing every later load.
    static func recover(
        _ entry: ActionLogEntry, reactor: R, name: String, state: inout R.State, version: inout UInt64, logger: Logger,
        tracer: SessionCallTracer
    ) {
        let id = tracer.session
        let seq = entry.seq
        let action: R.Action
        do {
            action = try tracer.run(.decodeAction, seq: seq, version: version, action: entry.action) {
                try JSONValueDecoder.stored.decode(R.Action.self, from: entry.action)
            }
        } catch {
            logger.warning(
                "an interrupted action no longer decodes; "
                    + "it is not handed to the reactor's recover(interrupted:state:)",
                [
                    "session": .string(id), "reactor": .string(name), "seq": .int(Int(entry.seq)),
                    "error": .string("\(error)"),
                ])
            return
        }
        let current = state
        let shown = tracer.run(.transformState, seq: seq, version: version, action: entry.action) {
            reactor.transform(state: current)
        }
        let mutations = tracer.run(.recover, seq: seq, version: version, action: entry.action) {
            reactor.recover(interrupted: action, state: shown)
        }
        for mutation in mutations {
            let before = state
            state = tracer.run(.reduce, seq: seq, version: version + 1, action: entry.action) {
                reactor.reduce(state: before, mutation: mutation)
            }
            version += 1
        }
        if !mutations.isEmpty {
            logger.notice(
                "recovered an action whose effects a stop cut off",
                ["session": .string(id), "seq": .int(Int(entry.seq)), "mutations": .int(mutations.count)])
        }
    }

    /// The state (`shown`: as observers see it) as JSON, replayed from `history`'s base (a snapshot's state)
    /// through its records for session `id` (time travel, forks), migrating what an earlier version of the
    /// reactor stored: the reactor's code runs, pinned on that session.
    @usableFromInline
    static func replay(
        reactor: R, id: String, name: String, template: JSONValue, history: StoredVersionHistory, shown: Bool
    ) throws(RestoreError) -> [UInt8] {
        var types = StoredTypes(reactor: reactor, name: name, template: template)
        let tracer = SessionCallTracer(session: id, reactor: name)
        let version = (history.states.first?.version ?? 1) &- 1
        do {
            var state = try tracer.run(.decodeState, version: version) {
                try types.state(history.base, storageVersion: history.baseStorageVersion)
            }
            for record in history.states {
                let before = state
                state = try tracer.run(.replay, version: record.version) { try types.replay(record, onto: before) }
            }
            let last = history.states.last?.version ?? version
            if shown { state = tracer.run(.transformState, version: last) { reactor.transform(state: state) } }
            let result = state
            return try tracer.run(.encodeState, version: last) { try JSONValueEncoder().encode(result) }
        } catch {
            throw RestoreError(
                reason: "the stored history does not decode with reactor \(JSONWriter.quoted(name)): \(error)")
        }
    }
}

extension JSONValueDecoder {
    /// The decoder for what this server journaled: no size or depth limit. The server wrote it, under
    /// limits that may have been higher than today's (`sessions.maxStateBytes`, `http.maxBodyBytes`), and
    /// a reader that refused what a writer wrote would lose the session for good.
    static var stored: JSONValueDecoder {
        var decoder = JSONValueDecoder()
        decoder.parser = JSONParser(maxDepth: .max, maxBytes: .max)
        return decoder
    }
}
