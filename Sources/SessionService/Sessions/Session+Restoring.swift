import JSONCodec
import Reactors

// How a session comes back from its stored history, and how a past version is rebuilt.
extension Session {
    /// Rebuilds a session from its stored history: decodes the snapshot (with its pulse counts) and replays
    /// the tail through the reactor's own `reduce`, as the runtime did. Throws the reason it cannot (the
    /// session is then quarantined).
    @inlinable
    static func restore(id: String, name: String, reactor: R, context: SessionContext, history: StoredHistory, journal: SessionJournal) throws(RestoreError) -> Session {
        // Replaying the history runs the reactor's code: a crash in it is pinned on this session.
        let tracer = SessionCallTracer(session: id, reactor: name)
        let restored = try restoredParts(
            name: name, reactor: reactor, history: history, journal: journal, tracer: tracer)
        // Made here, where the reactor type is known: what the session builds for itself (its state limit)
        // is then specialized for it.
        let session = Session(
            id: id, name: name, reactor: reactor, context: context, restoring: restored.checkpoint, journal: journal,
            actions: restored.actions, tracer: tracer)
        if restored.isStubbed { session.runtime.isStubEnabled = true }
        return session
    }

    /// The checkpoint a stored history leads to, its action log and whether it was in stub mode.
    @usableFromInline
    static func restoredParts(
        name: String, reactor: R, history: StoredHistory, journal: SessionJournal, tracer: SessionCallTracer
    ) throws(RestoreError) -> (checkpoint: Checkpoint<R.State>, actions: [ActionLogEntry], isStubbed: Bool) {
        let decoder = JSONValueDecoder.stored
        var state: R.State
        do {
            state = try tracer.run(.decodeState, version: history.snapshot.version) {
                try decoder.decode(R.State.self, from: history.snapshot.state)
            }
        } catch {
            throw RestoreError(reason: "its snapshot at version \(history.snapshot.version) does not decode as the state of reactor \(JSONWriter.quoted(name)): \(error)")
        }
        Pulses.restore(history.snapshot.pulses, into: &state)
        var version = history.snapshot.version
        for record in history.states {
            do {
                let before = state
                state = try tracer.run(.replay, version: record.version) {
                    try replay(record, onto: before, reactor: reactor, decoder: decoder)
                }
            } catch {
                throw RestoreError(reason: "its stored \(record.kind == .mutation ? "mutation" : "forced state") of version \(record.version) does not decode with reactor \(JSONWriter.quoted(name)): \(error)")
            }
            version = record.version
        }
        journal.noteInterrupted(history.actions.filter(\.interrupted).map(\.seq))
        return (Checkpoint(state: state, version: version, lastSeq: history.lastSeq), history.actions, history.snapshot.stub)
    }

    /// `state` after one stored record: a mutation reduced, or a forced state (whose pulses count as assigned, as the runtime counts them).
    static func replay(_ record: StoredState, onto state: R.State, reactor: R, decoder: JSONValueDecoder) throws -> R.State {
        switch record.kind {
        case .mutation:
            return reactor.reduce(state: state, mutation: try decoder.decode(R.Mutation.self, from: record.json))
        case .forced:
            var forced = try decoder.decode(R.State.self, from: record.json)
            Pulses.force(&forced, replacing: state)
            return forced
        }
    }

    /// The state (`shown`: as observers see it) as JSON, replayed from `base` (a snapshot's state) through
    /// `records` for session `id` (time travel, forks): the reactor's code runs, pinned on that session.
    @usableFromInline
    static func replay(
        reactor: R, id: String, name: String, base: [UInt8], records: [StoredState], shown: Bool
    ) throws(RestoreError) -> [UInt8] {
        let decoder = JSONValueDecoder.stored
        let tracer = SessionCallTracer(session: id, reactor: name)
        let version = (records.first?.version ?? 1) &- 1
        do {
            var state = try tracer.run(.decodeState, version: version) { try decoder.decode(R.State.self, from: base) }
            for record in records {
                let before = state
                state = try tracer.run(.replay, version: record.version) {
                    try replay(record, onto: before, reactor: reactor, decoder: decoder)
                }
            }
            let last = records.last?.version ?? version
            if shown { state = tracer.run(.transformState, version: last) { reactor.transform(state: state) } }
            let result = state
            return try tracer.run(.encodeState, version: last) { try JSONValueEncoder().encode(result) }
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
