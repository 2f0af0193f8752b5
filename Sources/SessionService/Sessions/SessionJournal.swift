import JSONCodec
import Reactors
import Synchronization

/// One resident session's side of the journal: its key, the order of its action records, and when its
/// next snapshot is due.
@usableFromInline
final class SessionJournal: Sendable {
    @usableFromInline let storage: FileJournal
    let key: UInt32
    let id: String
    let reactor: String
    /// Serializes the session's action records (accepts, completions, snapshots), so a snapshot
    /// reflects exactly the action records before it. Holds the seqs of unfinished actions: running
    /// ones, and retained ones a crash interrupted (they never finish).
    let actions = Mutex<[UInt64: Void]>([:])
    let sinceSnapshot = Atomic<Int>(0)
    /// Whether any record of this session was appended since its latest snapshot.
    let changedSinceSnapshot = Atomic<Bool>(false)

    init(storage: FileJournal, key: UInt32, id: String, reactor: String) {
        self.storage = storage
        self.key = key
        self.id = id
        self.reactor = reactor
    }

    /// Whether enough mutations have been journaled since the last snapshot.
    @usableFromInline
    var isSnapshotDue: Bool { sinceSnapshot.load(ordering: .relaxed) >= storage.options.snapshotEvery }

    /// Journals a reduced mutation; false when it is larger than a record (nothing written).
    func journal(mutation json: [UInt8], version: UInt64) -> Bool {
        guard json.count <= JournalRecord.maxBodyBytes - JournalRecord.headerBytes else { return false }
        storage.append(kind: .mutation, key: key, number: version) { $0.append(contentsOf: json) }
        sinceSnapshot.add(1, ordering: .relaxed)
        changedSinceSnapshot.store(true, ordering: .relaxed)
        return true
    }

    /// Journals a state as version `version` (forced in stub mode, or standing in for a mutation too
    /// large for a record); false when it is larger than a record (nothing written).
    func journal(forced json: [UInt8], version: UInt64) -> Bool {
        guard json.count <= JournalRecord.maxBodyBytes - JournalRecord.headerBytes else { return false }
        storage.append(kind: .forced, key: key, number: version) { $0.append(contentsOf: json) }
        sinceSnapshot.add(1, ordering: .relaxed)
        changedSinceSnapshot.store(true, ordering: .relaxed)
        return true
    }

    /// A version that no record can hold (its state is larger than a record): logged loudly, since
    /// a restart will find the session's history broken there and quarantine it.
    func cannotJournal(version: UInt64, _ what: String) {
        sinceSnapshot.store(.max / 2, ordering: .relaxed)
        storage.logger.critical(
            "a version cannot be journaled: \(what) is larger than the journal's record limit; after a restart the session will be unavailable",
            ["session": .string(id), "version": .int(Int(version)), "limit_bytes": .int(JournalRecord.maxBodyBytes)])
    }

    /// Journals an accepted action; `ticket` says whether its mutations were already all reduced.
    @usableFromInline
    func accepted(_ ticket: ActionTicket, seq: UInt64, at: Int64, stubbed: Bool, body: [UInt8]) {
        actions.withLock { running in
            let accept = StoredAccept(at: at, stubbed: stubbed, completed: ticket.done, body: body)
            if !ticket.done {
                ticket.seq = seq
                running[seq] = ()
            }
            storage.append(kind: .accept, key: key, number: seq) { accept.encode(into: &$0) }
            changedSinceSnapshot.store(true, ordering: .relaxed)
        }
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
            storage.append(kind: .complete, key: key, number: seq) { _ in }
            changedSinceSnapshot.store(true, ordering: .relaxed)
        }
    }

    /// Notes the retained actions a crash interrupted, so later snapshots keep saying so.
    func noteInterrupted(_ seqs: [UInt64]) {
        actions.withLock { running in
            for seq in seqs { running[seq] = () }
        }
    }

    /// Journals a snapshot; the caller holds the session's action-log lock so `actions` is current.
    /// The action log is not in it (its accept records are kept alive instead); interrupted actions
    /// older than `oldestRetained` are forgotten.
    /// False when the snapshot is larger than a record: nothing was written, and the session must
    /// stay in memory (its records since the previous snapshot still describe it).
    func snapshot(version: UInt64, lastSeq: UInt64, stub: Bool, state: [UInt8], pulses: [String: UInt64] = [:], oldestRetained: UInt64?, passivating: Bool) -> Bool {
        actions.withLock { running in
            if let oldestRetained, running.keys.contains(where: { $0 < oldestRetained }) {
                running = running.filter { $0.key >= oldestRetained }
            }
            let snapshot = StoredSnapshot(id: id, reactor: reactor, version: version, lastSeq: lastSeq, stub: stub, state: state, actions: [], running: running.keys.sorted(), pulses: pulses)
            guard storage.appendSnapshot(key: key, snapshot, passivating: passivating) else {
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

    /// Marks the session as leaving memory when nothing was journaled since its latest snapshot (that
    /// snapshot already describes it); false when a fresh snapshot is needed.
    func leaveIfUnchanged() -> Bool {
        actions.withLock { _ in
            guard !changedSinceSnapshot.load(ordering: .relaxed) else { return false }
            storage.markPassive(key: key)
            return true
        }
    }

    /// Journals the retained action log as a checkpoint (compaction), so the accept records it covers
    /// no longer keep old segments alive. `entries` calls its argument with every entry, oldest first;
    /// they are written in chunks, each written out once the buffer grows, so the log is never copied.
    func checkpoint(_ entries: ((ActionLogEntry) -> Void) -> Void) {
        actions.withLock { _ in
            var chunks = ActionLogCheckpoint()
            let emit = { [storage, key] (kind: JournalRecord.Kind, chunk: [ActionLogEntry]) in
                storage.append(kind: kind, key: key, number: chunk[chunk.count - 1].seq) { StoredActionLog.encode(chunk, into: &$0) }
                storage.flushIfLarge()
            }
            entries { chunks.add($0, emit: emit) }
            guard let last = chunks.finish(emit: emit) else { return }
            storage.append(kind: .actionLogEnd, key: key, number: last) { _ in }
        }
    }
}

/// Whether an accepted action has finished; only touched under its journal's `actions` lock.
@usableFromInline
final class ActionTicket: @unchecked Sendable {
    var done = false
    var seq: UInt64?

    @usableFromInline init() {}
}

/// Journals every reduced mutation and forced state before any observer sees the state.
struct JournalMiddleware<R: Reactor>: ReactorMiddleware {
    let journal: SessionJournal
    let encodings = MutationEncodings.shared(for: R.Mutation.self)

    /// It never refuses an action: `send` need not call it.
    var interceptsActions: Bool { false }

    func didReduce(mutation: R.Mutation, state: R.State, version: UInt64) {
        do {
            if journal.journal(mutation: try encodings.encode(mutation), version: version) { return }
            // A mutation too large for a record: the state it produced replays the same version.
            if journal.journal(forced: try JSONValueEncoder().encode(state), version: version) { return }
            journal.cannotJournal(version: version, "its mutation and its state are each")
        } catch {
            // Without the mutation the version cannot be replayed: a snapshot must cover it instead.
            journal.sinceSnapshot.store(.max / 2, ordering: .relaxed)
            journal.storage.logger.error("a mutation does not encode as JSON; a snapshot will cover it", ["session": .string(journal.id), "version": .int(Int(version)), "error": .string("\(error)")])
        }
    }

    func didForce(state: R.State, version: UInt64) {
        do {
            if journal.journal(forced: try JSONValueEncoder().encode(state), version: version) { return }
            journal.cannotJournal(version: version, "the forced state")
        } catch {
            journal.sinceSnapshot.store(.max / 2, ordering: .relaxed)
            journal.storage.logger.error("a forced state does not encode as JSON", ["session": .string(journal.id), "error": .string("\(error)")])
        }
    }
}

/// The JSON of recent mutations of a plain-bits type (a payload-less enum, a small trivial struct), by
/// their bits: equal bits are the same value, so the same JSON. Encoding through `Codable` is the
/// largest cost of journaling a mutation; most reactors' mutations repeat a handful of cases.
/// One cache per mutation type, shared by every session of it.
final class MutationEncodings: Sendable {
    static let capacity = 64
    private static let byType = Mutex<[ObjectIdentifier: MutationEncodings]>([:])
    /// A short list searched in order: a handful of cases, where hashing cost more than the scan.
    private let cache = Mutex<[(bits: UInt64, json: [UInt8])]>([])

    /// The cache of mutation type `type`.
    static func shared(for type: Any.Type) -> MutationEncodings {
        byType.withLock { caches in
            if let cache = caches[ObjectIdentifier(type)] { return cache }
            let cache = MutationEncodings()
            caches[ObjectIdentifier(type)] = cache
            return cache
        }
    }

    func encode<M: Encodable>(_ mutation: M) throws -> [UInt8] {
        guard _isPOD(M.self), MemoryLayout<M>.size <= 8 else { return try JSONValueEncoder().encode(mutation) }
        var key: UInt64 = 0
        withUnsafeBytes(of: mutation) { bits in
            withUnsafeMutableBytes(of: &key) { $0.copyMemory(from: bits) }
        }
        // The size is part of the key, so a 1-byte value never collides with a wider one.
        key = key ^ (UInt64(MemoryLayout<M>.size) << 60)
        if let known = cache.withLock({ cache in cache.first(where: { $0.bits == key })?.json }) { return known }
        let json = try JSONValueEncoder().encode(mutation)
        cache.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll(keepingCapacity: true) }
            cache.append((key, json))
        }
        return json
    }
}
