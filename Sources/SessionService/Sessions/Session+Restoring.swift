import JSONCodec
import Logs
import Synchronization
import Reactors

// How a session comes back from its stored history, and how a past version is rebuilt.
extension Session {
    /// Rebuilds a session from its stored history: decodes the snapshot (with its pulse counts) and replays
    /// the tail through the reactor's own `reduce`, as the runtime did, migrating what an earlier version of
    /// the reactor stored (``StoredTypes``). Throws the reason it cannot (the session is then quarantined).
    @inlinable
    static func restore(
        id: String, name: String, reactor: R, template: JSONValue, context: SessionContext, history: StoredHistory,
        journal: SessionJournal, middlewares: [any ReactorMiddleware<R>] = []
    ) throws(RestoreError) -> Session {
        let restored = try restoredParts(name: name, reactor: reactor, template: template, history: history, journal: journal)
        // Made here, where the reactor type is known: what the session builds for itself (its state limit)
        // is then specialized for it.
        let session = Session(
            id: id, name: name, reactor: reactor, context: context, restoring: restored.checkpoint, journal: journal,
            actions: restored.actions, middlewares: middlewares)
        if restored.isStubbed { session.runtime.isStubEnabled = true }
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
    static func storedState(_ history: StoredHistory, types: inout StoredTypes<R>) throws(RestoreError) -> (R.State, UInt64) {
        let snapshot = history.snapshot
        var state: R.State
        do {
            state = try types.state(snapshot.state, storageVersion: snapshot.storageVersion)
        } catch {
            throw RestoreError(reason: types.reason(
                "its snapshot at version \(snapshot.version)", storageVersion: snapshot.storageVersion, error))
        }
        Pulses.restore(snapshot.pulses, into: &state)
        var version = snapshot.version
        for record in history.states {
            do {
                state = try types.replay(record, onto: state)
            } catch {
                let what = "its stored \(record.kind == .mutation ? "mutation" : "forced state") of version \(record.version)"
                throw RestoreError(reason: types.reason(what, storageVersion: record.storageVersion, error))
            }
            version = record.version
        }
        return (state, version)
    }

    /// Whether a stored history loads with this reactor, and what had to be made of it (`verify`); nothing is
    /// run but decoding, migrations and `reduce`.
    @usableFromInline
    static func check(reactor: R, name: String, template: JSONValue, history: StoredHistory) -> Result<LoadReport, RestoreError> {
        var types = StoredTypes(reactor: reactor, name: name, template: template)
        do throws(RestoreError) {
            _ = try storedState(history, types: &types)
            return .success(types.report)
        } catch {
            return .failure(error)
        }
    }

    /// The checkpoint a stored history leads to, its action log and whether it was in stub mode.
    @usableFromInline
    static func restoredParts(
        name: String, reactor: R, template: JSONValue, history: StoredHistory, journal: SessionJournal
    ) throws(RestoreError) -> (checkpoint: Checkpoint<R.State>, actions: [ActionLogEntry], isStubbed: Bool, recovered: Bool) {
        var types = StoredTypes(reactor: reactor, name: name, template: template)
        var (state, version) = try storedState(history, types: &types)
        if types.report.isMigrated {
            journal.logger.notice(
                "a stored session was migrated as it loaded; its next snapshot is in the reactor's current storage version",
                ["session": .string(journal.id), "reactor": .string(name), "migration": .string(types.report.summary)])
        }
        let interrupted = history.actions.filter(\.interrupted)
        journal.noteInterrupted(interrupted.map(\.seq))
        let before = version
        // In stub mode nothing runs: recovery waits for a load with stub mode off.
        if !history.snapshot.stub {
            for entry in interrupted where entry.seq > history.snapshot.recoveredThrough {
                recover(entry, reactor: reactor, name: name, state: &state, version: &version, logger: journal.logger, id: journal.id)
            }
            journal.recoveredThrough.store(history.lastSeq, ordering: .relaxed)
        } else {
            journal.recoveredThrough.store(history.snapshot.recoveredThrough, ordering: .relaxed)
        }
        let checkpoint = Checkpoint(state: state, version: version, lastSeq: history.lastSeq)
        return (checkpoint, history.actions, history.snapshot.stub, version != before)
    }

    /// Reduces what the reactor's `recover(interrupted:state:)` makes of one interrupted action, each
    /// mutation a version; an action that no longer decodes is left alone (logged).
    static func recover(
        _ entry: ActionLogEntry, reactor: R, name: String, state: inout R.State, version: inout UInt64, logger: Logger, id: String
    ) {
        let action: R.Action
        do {
            action = try JSONValueDecoder.stored.decode(R.Action.self, from: entry.action)
        } catch {
            logger.warning(
                "an interrupted action no longer decodes; it is not handed to the reactor's recover(interrupted:state:)",
                ["session": .string(id), "reactor": .string(name), "seq": .int(Int(entry.seq)), "error": .string("\(error)")])
            return
        }
        let mutations = reactor.recover(interrupted: action, state: reactor.transform(state: state))
        for mutation in mutations {
            state = reactor.reduce(state: state, mutation: mutation)
            version += 1
        }
        if !mutations.isEmpty {
            logger.notice(
                "recovered an action whose effects a stop cut off",
                ["session": .string(id), "seq": .int(Int(entry.seq)), "mutations": .int(mutations.count)])
        }
    }

    /// The state (`shown`: as observers see it) as JSON, replayed from `history`'s base (a snapshot's state)
    /// through its records, migrating what an earlier version of the reactor stored.
    @usableFromInline
    static func replay(
        reactor: R, name: String, template: JSONValue, history: StoredVersionHistory, shown: Bool
    ) throws(RestoreError) -> [UInt8] {
        var types = StoredTypes(reactor: reactor, name: name, template: template)
        do {
            var state = try types.state(history.base, storageVersion: history.baseStorageVersion)
            for record in history.states { state = try types.replay(record, onto: state) }
            return try shown ? JSONValueEncoder().encode(reactor.transform(state: state)) : JSONValueEncoder().encode(state)
        } catch {
            throw RestoreError(reason: "the stored history does not decode with reactor \(JSONWriter.quoted(name)): \(error)")
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
