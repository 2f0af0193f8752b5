import JSONCodec
import Reactors
import Tokens

// How a session is journaled, snapshotted and passivated.
extension Session {
    /// Stores a new session's initial snapshot (version 0) with its access token's hash, and returns
    /// its journal.
    @usableFromInline
    static func createJournal(
        id: String, name: String, runtime: ReactorRuntime<InstrumentedReactor<R>>, context: SessionContext,
        accessTokenHash: SessionTokenHash?, params: [UInt8], tracer: SessionCallTracer
    ) -> SessionJournal? {
        guard let storage = context.storage else { return nil }
        let checkpoint = runtime.checkpoint
        do {
            let state = try tracer.run(.encodeState, version: checkpoint.version) {
                try JSONValueEncoder().encode(checkpoint.state)
            }
            let snapshot = StoredSnapshot(
                id: id, reactor: name, version: checkpoint.version, lastSeq: checkpoint.lastSeq, stub: false,
                state: state, pulses: checkpoint.pulseCounts, params: params, storageVersion: R.storageVersion)
            guard let log = storage.create(snapshot, accessTokenHash: accessTokenHash) else {
                context.logger.error(
                    "a session id is already stored; this session is not persisted", ["session": .string(id)])
                return nil
            }
            return SessionJournal(
                log: log, id: id, reactor: name, storageVersion: R.storageVersion,
                snapshotEvery: context.limits.snapshotEvery, logger: context.logger, params: params)
        } catch {
            context.logger.error(
                "the initial state does not encode as JSON; the session is not persisted",
                ["session": .string(id), "error": .string("\(error)")])
            return nil
        }
    }

    /// Adds the journaling middleware.
    @usableFromInline
    func attachJournal() {
        guard let journal else { return }
        runtime.addMiddleware(JournalMiddleware<InstrumentedReactor<R>>(journal: journal, tracer: tracer))
    }

    /// Journals a snapshot now (compaction, due snapshots found by the sweep).
    @usableFromInline
    func writeSnapshot() {
        _ = log.withLock { writeSnapshot(&$0, passivating: false) }
    }

    /// Journals a snapshot and the retained action log, so nothing of this session needs older segments.
    @usableFromInline
    func writeCompactionCheckpoint() {
        log.withLock { log in
            writeSnapshot(&log, passivating: false)
            journal?.checkpoint { body in log.forEach(body) }
        }
    }

    /// Journals a snapshot; the caller holds the action-log lock. False when none could be written.
    @usableFromInline
    @discardableResult
    func writeSnapshot(_ log: inout ActionLog, passivating: Bool) -> Bool {
        guard let journal else { return false }
        // Leaving memory unchanged since the latest snapshot (a new session, or one only read): that
        // snapshot stands, and writing it again would only grow the journal.
        if passivating, journal.releaseIfUnchanged() { return true }
        journal.startSnapshot()
        let checkpoint = runtime.checkpoint
        do {
            // Usually the JSON the state-size check made when the state was reduced.
            let state = try json(of: checkpoint.state, version: checkpoint.version)
            let stored = journal.snapshot(
                version: checkpoint.version, lastSeq: checkpoint.lastSeq, stub: runtime.isStubEnabled, state: state,
                pulses: checkpoint.pulseCounts, oldestRetained: log.oldestSeq, timers: withTimersForSnapshot)
            if stored {
                if passivating { journal.release() }
                return true
            }
            context.logger.error(
                "a snapshot is larger than a stored record may be; none written",
                ["session": .string(id), "version": .int(Int(checkpoint.version)), "state_bytes": .int(state.count)])
        } catch {
            journal.changedSinceSnapshot.store(true, ordering: .relaxed)
            context.logger.error(
                "a state does not encode as JSON; no snapshot written",
                ["session": .string(id), "version": .int(Int(checkpoint.version)), "error": .string("\(error)")])
        }
        return false
    }

    /// Leaves memory: stops the runtime and journals a final snapshot. False when it must stay (effects
    /// running, subscribers, merged sources whose values would be lost, not persisted, or a state no
    /// snapshot record can hold: a session out of memory is described by its latest snapshot).
    @usableFromInline
    func passivate() -> Bool {
        guard let journal, runtime.inFlightEffectCount == 0, !runtime.hasMergedSources else { return false }
        // Checked before the runtime stops, which cannot be undone (the JSON is the one the state-size
        // check keeps, so the snapshot below does not encode it again).
        if journal.changedSinceSnapshot.load(ordering: .relaxed) {
            let checkpoint = runtime.checkpoint
            guard let state = try? json(of: checkpoint.state, version: checkpoint.version),
                state.count <= journal.log.largestSnapshotState
            else { return false }
        }
        let idle = shared.withLock { shared -> Bool in
            guard shared.subscribers.isEmpty, !shared.ended else { return false }
            passivated.store(true, ordering: .releasing)
            shared.observation?.cancel()
            shared.observation = nil
            return true
        }
        guard idle else { return false }
        runtime.stop()
        if !log.withLock({ writeSnapshot(&$0, passivating: true) }) {
            context.logger.critical(
                "a session left memory without its final snapshot; its latest versions come back only after a restart",
                ["session": .string(id)])
        }
        return true
    }

    /// Leaves memory so `instance` can run it: like ``passivate()``, but its subscribers are sent to
    /// reconnect (`session_moved`) and merged sources do not keep it (the next owner merges them
    /// again). Every state is already journaled, so a snapshot that cannot be written only makes the
    /// next owner replay more. False while an effect runs: its later mutations need this runtime.
    @usableFromInline
    func handOff(to instance: String) -> Bool {
        guard let journal, runtime.inFlightEffectCount == 0 else { return false }
        let subscribers = shared.withLock { shared -> [Subscriber]? in
            guard !shared.ended else { return nil }
            shared.ended = true
            passivated.store(true, ordering: .releasing)
            shared.observation?.cancel()
            shared.observation = nil
            return shared.subscribers.removeAll(reporting)
        }
        guard let subscribers else { return false }
        runtime.stop()
        if !log.withLock({ writeSnapshot(&$0, passivating: true) }) {
            journal.release()
            context.logger.notice(
                "a session handed off without a final snapshot; "
                    + "the next instance replays its records since the last one",
                ["session": .string(id)])
        }
        let message = "the session moved to instance \(instance); reconnect to follow it"
        SubscriberList.finish(subscribers, .moved(message))
        return true
    }

    /// The storage position of its newest record (0 in memory-only mode).
    @usableFromInline
    var storedPosition: UInt64 { journal?.log.lastPosition ?? 0 }

    /// Whether a snapshot is due (many mutations from effects since the last one).
    @usableFromInline
    var isSnapshotDue: Bool { journal?.isSnapshotDue ?? false }
}
