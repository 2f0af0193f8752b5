import Logs
import Reactors
import Synchronization

/// One resident session's journaling, whatever the backend: it orders the session's action records,
/// keeps the unfinished actions (running ones, and retained ones a crash interrupted), and says when a
/// snapshot is due; the records go to the session's `SessionLog`.
@usableFromInline
final class SessionJournal: Sendable {
    let log: any SessionLog
    let id: String
    let reactor: String
    /// The reactor's `storageVersion`, written with every state record and snapshot.
    let storageVersion: Int
    /// Mutations between two snapshots (`storage.snapshotEvery`).
    let snapshotEvery: Int
    let logger: Logger
    /// Serializes the session's action records (accepts, completions, snapshots), so a snapshot
    /// reflects exactly the action records before it. Holds the seqs of unfinished actions.
    let actions = Mutex<[UInt64: Void]>([:])
    let sinceSnapshot = Atomic<Int>(0)
    /// Whether any record of this session was appended since its latest snapshot.
    let changedSinceSnapshot: Atomic<Bool>
    /// The seq up to which interrupted actions were recovered (see ``StoredSnapshot/recoveredThrough``),
    /// carried into every snapshot.
    let recoveredThrough = Atomic<UInt64>(0)
    /// The session's parameters as JSON, written into every snapshot (empty: none).
    let params: [UInt8]

    /// A journal over `log`; `changed` when records follow the session's latest snapshot.
    init(
        log: any SessionLog, id: String, reactor: String, storageVersion: Int, snapshotEvery: Int, logger: Logger,
        changed: Bool = false, params: [UInt8] = []
    ) {
        self.log = log
        self.storageVersion = storageVersion
        self.params = params
        self.id = id
        self.reactor = reactor
        self.snapshotEvery = snapshotEvery
        self.logger = logger
        changedSinceSnapshot = Atomic(changed)
    }

    /// Why nothing can be journaled right now; nil when it can.
    @usableFromInline
    var unavailableReason: String? { log.unavailableReason }

    /// The largest action (its canonical JSON) the storage holds.
    @usableFromInline
    var maxActionBytes: Int { log.maxActionBytes }

    /// Whether enough mutations have been journaled since the last snapshot.
    @usableFromInline
    var isSnapshotDue: Bool { sinceSnapshot.load(ordering: .relaxed) >= snapshotEvery }

    /// Makes a snapshot due now: a version was journaled that replay cannot rebuild.
    func requireSnapshot() {
        sinceSnapshot.store(.max / 2, ordering: .relaxed)
    }

    /// Journals a reduced mutation; false when it is larger than a record (nothing written).
    func journal(mutation json: [UInt8], version: UInt64) -> Bool {
        guard log.appendMutation(json, version: version, storageVersion: storageVersion) else { return false }
        sinceSnapshot.add(1, ordering: .relaxed)
        changedSinceSnapshot.store(true, ordering: .relaxed)
        return true
    }

    /// Journals a state as version `version` (forced in stub mode, or standing in for a mutation too
    /// large for a record); false when it is larger than a record (nothing written).
    func journal(forced json: [UInt8], version: UInt64) -> Bool {
        guard log.appendForcedState(json, version: version, storageVersion: storageVersion) else { return false }
        sinceSnapshot.add(1, ordering: .relaxed)
        changedSinceSnapshot.store(true, ordering: .relaxed)
        return true
    }

    /// A version that no record can hold (its state is larger than a record): logged loudly, since
    /// a restart will find the session's history broken there and quarantine it.
    func cannotJournal(version: UInt64, _ what: String) {
        requireSnapshot()
        logger.critical(
            "a version cannot be journaled: \(what) is larger than a stored record may be; "
                + "after a restart the session will be unavailable",
            ["session": .string(id), "version": .int(Int(version))])
    }

    /// Holds the records appended until ``releasePublishes()`` (see ``SessionLog/holdPublishes()``).
    @usableFromInline
    func holdPublishes() { log.holdPublishes() }

    /// Sends what ``holdPublishes()`` held.
    @usableFromInline
    func releasePublishes() { log.releasePublishes() }

    /// Journals an accepted action; `ticket` says whether its mutations were already all reduced.
    @usableFromInline
    func accepted(
        _ ticket: ActionTicket, seq: UInt64, at: Int64, stubbed: Bool, origin: ActionOrigin = .request, body: [UInt8],
        timer: String? = nil
    ) {
        actions.withLock { running in
            let completed = ticket.done
            if !completed {
                ticket.seq = seq
                running[seq] = ()
            }
            log.appendAccept(
                seq: seq, at: at, stubbed: stubbed, completed: completed, origin: origin, action: body, timer: timer)
            changedSinceSnapshot.store(true, ordering: .relaxed)
        }
    }

    /// Called when the ticket's action ends: `result` is its runtime's completion.
    ///
    /// When every mutation it produced was reduced, the completion is journaled. When the runtime
    /// stopped first (`.stopped`: shutdown, or the session left this process) nothing is journaled:
    /// the action stays unfinished, so later snapshots and a restart show it interrupted, never re-run.
    @inlinable
    func ended<S>(_ ticket: ActionTicket, _ result: Result<S, ReactorError>) {
        if case .failure(.stopped) = result { return }
        completed(ticket)
    }

    /// Called when every mutation of the ticket's action has been reduced.
    @usableFromInline
    func completed(_ ticket: ActionTicket) {
        actions.withLock { running in
            guard let seq = ticket.seq else {
                ticket.done = true
                return
            }
            ticket.seq = nil
            ticket.done = true
            guard running.removeValue(forKey: seq) != nil else { return }
            log.appendCompletion(seq: seq)
            changedSinceSnapshot.store(true, ordering: .relaxed)
        }
    }

    /// Journals a change of the session's timers numbered `serial`; false when it is larger than a record.
    func journal(timer change: TimerChange, serial: UInt64) -> Bool {
        guard log.appendTimer(change, serial: serial) else { return false }
        changedSinceSnapshot.store(true, ordering: .relaxed)
        return true
    }

    /// Notes the retained actions a crash interrupted, so later snapshots keep saying so.
    func noteInterrupted(_ seqs: [UInt64]) {
        actions.withLock { running in
            for seq in seqs { running[seq] = () }
        }
    }

    /// Journals a snapshot; the caller holds the session's action-log lock so `actions` is current.
    /// The action log is not in it (its accept records are kept instead); interrupted actions older
    /// than `oldestRetained` are forgotten. False when the snapshot is larger than a record: nothing
    /// was written, and the session must stay in memory (its records since the previous snapshot
    /// still describe it).
    ///
    /// `timers` calls its argument with the pending timers and the timer serial while holding the timers'
    /// lock, so no timer record lands between reading them and appending the snapshot.
    func snapshot(
        version: UInt64, lastSeq: UInt64, stub: Bool, state: [UInt8], pulses: [String: UInt64] = [:],
        oldestRetained: UInt64?, timers: (([PendingTimer], UInt64) -> Bool) -> Bool = { $0([], 0) }
    ) -> Bool {
        actions.withLock { running in
            if let oldestRetained, running.keys.contains(where: { $0 < oldestRetained }) {
                running = running.filter { $0.key >= oldestRetained }
            }
            var snapshot = StoredSnapshot(
                id: id, reactor: reactor, version: version, lastSeq: lastSeq, stub: stub, state: state,
                running: running.keys.sorted(),
                pulses: pulses, recoveredThrough: recoveredThrough.load(ordering: .relaxed), params: params,
                storageVersion: storageVersion)
            let appended = timers { pending, serial in
                snapshot.timers = pending
                snapshot.timerSerial = serial
                return log.appendSnapshot(snapshot)
            }
            guard appended else {
                changedSinceSnapshot.store(true, ordering: .relaxed)
                return false
            }
            sinceSnapshot.store(0, ordering: .relaxed)
            return true
        }
    }

    /// Called before a snapshot reads the session's state: whatever is journaled from now on may not be in it.
    func startSnapshot() {
        changedSinceSnapshot.store(false, ordering: .sequentiallyConsistent)
    }

    /// Leaves memory when nothing was journaled since the latest snapshot (that snapshot already
    /// describes the session); false when a fresh snapshot is needed first.
    func releaseIfUnchanged() -> Bool {
        actions.withLock { _ in
            guard !changedSinceSnapshot.load(ordering: .relaxed) else { return false }
            log.release()
            return true
        }
    }

    /// Leaves memory after the final snapshot: the backend may hand the session to another process.
    func release() {
        actions.withLock { _ in log.release() }
    }

    /// Journals the retained action log as a checkpoint (compaction), so the accept records it covers
    /// are no longer needed. `entries` calls its argument with every entry, oldest first.
    func checkpoint(_ entries: ((ActionLogEntry) -> Void) -> Void) {
        actions.withLock { _ in log.appendActionLogCheckpoint(entries) }
    }
}

/// Whether an accepted action has finished; only touched under its journal's `actions` lock.
@usableFromInline
final class ActionTicket: @unchecked Sendable {
    var done = false
    var seq: UInt64?
    /// The journal the action is accepted in. Held here so that the runtime's completion captures the
    /// ticket alone: a closure capturing one reference needs no context of its own, one capturing the
    /// journal and the ticket allocated a second block per action.
    @usableFromInline let journal: SessionJournal

    @usableFromInline init(journal: SessionJournal) { self.journal = journal }

    /// The action ended with `result`: see ``SessionJournal/ended(_:_:)``.
    @inlinable
    func ended<S>(_ result: Result<S, ReactorError>) { journal.ended(self, result) }
}
