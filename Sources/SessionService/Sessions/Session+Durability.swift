import JSONCodec
import Reactors

// How a session is journaled, snapshotted, passivated and restored.
extension Session {
    /// Journals a new session's initial snapshot (version 0, or the fork point) and returns its journal.
    @usableFromInline
    static func createJournal(id: String, name: String, runtime: ReactorRuntime<InstrumentedReactor<R>>, context: SessionContext) -> SessionJournal? {
        guard let storage = context.storage else { return nil }
        let checkpoint = runtime.checkpoint
        do {
            let state = try JSONValueEncoder().encode(checkpoint.state)
            let snapshot = StoredSnapshot(id: id, reactor: name, version: checkpoint.version, lastSeq: checkpoint.lastSeq, stub: false, state: state, actions: [], running: [], pulses: checkpoint.pulseCounts)
            guard let key = storage.create(snapshot) else {
                context.logger.error("a session id is already journaled; this session is not persisted", ["session": .string(id)])
                return nil
            }
            return SessionJournal(storage: storage, key: key, id: id, reactor: name)
        } catch {
            context.logger.error("the initial state does not encode as JSON; the session is not persisted", ["session": .string(id), "error": .string("\(error)")])
            return nil
        }
    }

    /// Adds the journaling middleware.
    @usableFromInline
    func attachJournal() {
        guard let journal else { return }
        runtime.addMiddleware(JournalMiddleware<InstrumentedReactor<R>>(journal: journal))
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
        if passivating, journal.leaveIfUnchanged() { return true }
        journal.startSnapshot()
        let checkpoint = runtime.checkpoint
        do {
            // Usually the JSON the state-size check made when the state was reduced.
            let state = try json(of: checkpoint.state)
            if journal.snapshot(version: checkpoint.version, lastSeq: checkpoint.lastSeq, stub: runtime.isStubEnabled, state: state, pulses: checkpoint.pulseCounts, oldestRetained: log.oldestSeq, passivating: passivating) { return true }
            context.logger.error("a snapshot is larger than the journal's record limit; none written", ["session": .string(id), "version": .int(Int(checkpoint.version)), "state_bytes": .int(state.count)])
        } catch {
            journal.changedSinceSnapshot.store(true, ordering: .relaxed)
            context.logger.error("a state does not encode as JSON; no snapshot written", ["session": .string(id), "version": .int(Int(checkpoint.version)), "error": .string("\(error)")])
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
            guard let state = try? json(of: runtime.checkpoint.state), StoredSnapshot.fits(state: state, id: id, reactor: reactorName) else { return false }
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
            context.logger.critical("a session left memory without its final snapshot; its latest versions come back only after a restart", ["session": .string(id)])
        }
        return true
    }

    /// Whether a snapshot is due (many mutations from effects since the last one).
    @usableFromInline
    var isSnapshotDue: Bool { journal?.isSnapshotDue ?? false }

    /// Rebuilds a session from its stored history: decodes the snapshot (with its pulse counts) and replays
    /// the tail through the reactor's own `reduce`, as the runtime did. Throws the reason it cannot (the
    /// session is then quarantined).
    @inlinable
    static func restore(id: String, name: String, reactor: R, context: SessionContext, history: StoredHistory, journal: SessionJournal) throws(RestoreError) -> Session {
        let restored = try restoredParts(name: name, reactor: reactor, history: history, journal: journal)
        // Made here, where the reactor type is known: what the session builds for itself (its state limit)
        // is then specialized for it.
        let session = Session(id: id, name: name, reactor: reactor, context: context, restoring: restored.checkpoint, journal: journal, actions: restored.actions)
        if restored.isStubbed { session.runtime.isStubEnabled = true }
        return session
    }

    /// The checkpoint a stored history leads to, its action log and whether it was in stub mode.
    @usableFromInline
    static func restoredParts(name: String, reactor: R, history: StoredHistory, journal: SessionJournal) throws(RestoreError) -> (checkpoint: Checkpoint<R.State>, actions: [ActionLogEntry], isStubbed: Bool) {
        let decoder = JSONValueDecoder.stored
        var state: R.State
        do {
            state = try decoder.decode(R.State.self, from: history.snapshot.state)
        } catch {
            throw RestoreError(reason: "its snapshot at version \(history.snapshot.version) does not decode as the state of reactor \(JSONWriter.quoted(name)): \(error)")
        }
        Pulses.restore(history.snapshot.pulses, into: &state)
        var version = history.snapshot.version
        for record in history.states {
            do {
                state = try replay(record, onto: state, reactor: reactor, decoder: decoder)
            } catch {
                throw RestoreError(reason: "its journaled \(record.kind == .mutation ? "mutation" : "forced state") of version \(record.number) does not decode with reactor \(JSONWriter.quoted(name)): \(error)")
            }
            version = record.number
        }
        journal.noteInterrupted(history.actions.filter(\.interrupted).map(\.seq))
        return (Checkpoint(state: state, version: version, lastSeq: history.lastSeq), history.actions, history.snapshot.stub)
    }

    /// `state` after one journaled record: a mutation reduced, or a forced state (whose pulses count as assigned, as the runtime counts them).
    static func replay(_ record: JournalRecord, onto state: R.State, reactor: R, decoder: JSONValueDecoder) throws -> R.State {
        switch record.kind {
        case .mutation:
            return reactor.reduce(state: state, mutation: try decoder.decode(R.Mutation.self, from: record.payload))
        default:
            var forced = try decoder.decode(R.State.self, from: record.payload)
            Pulses.force(&forced, replacing: state)
            return forced
        }
    }

    /// The state (`shown`: as observers see it) as JSON, replayed from `base` (a snapshot's state) through `records`.
    @usableFromInline
    static func replay(reactor: R, name: String, base: [UInt8], records: [JournalRecord], shown: Bool) throws(RestoreError) -> [UInt8] {
        let decoder = JSONValueDecoder.stored
        do {
            var state = try decoder.decode(R.State.self, from: base)
            for record in records { state = try replay(record, onto: state, reactor: reactor, decoder: decoder) }
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

/// Why a stored session cannot be brought back.
public struct RestoreError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
