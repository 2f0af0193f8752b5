import Synchronization

/// One resident session's records in the file journal, under its key in the journal's index.
final class FileSessionLog: SessionLog {
    let journal: FileJournal
    let key: UInt32
    /// The index's entry for `key`, so an action's records reach it without a lookup.
    let entry: IndexEntry
    let id: String
    let reactor: String
    /// The position of this session's newest record.
    private let last: Atomic<UInt64>

    init(journal: FileJournal, key: UInt32, entry: IndexEntry, id: String, reactor: String, position: UInt64) {
        self.journal = journal
        self.key = key
        self.entry = entry
        self.id = id
        self.reactor = reactor
        last = Atomic(position)
    }

    var unavailableReason: String? { journal.unavailableReason }

    var maxActionBytes: Int { FileJournal.maxActionBytes }

    /// A snapshot's bookkeeping (id, reactor, pulse counts, unfinished actions) needs room besides the
    /// state: a megabyte is far more than any of it takes.
    var largestSnapshotState: Int {
        JournalRecord.maxBodyBytes - JournalRecord.headerBytes - (1 << 20) - id.utf8.count - reactor.utf8.count
    }

    var lastPosition: UInt64 { last.load(ordering: .acquiring) }

    func appendAccept(
        seq: UInt64, at: Int64, stubbed: Bool, completed: Bool, origin: ActionOrigin, action: [UInt8], timer: String?
    ) {
        note(
            journal.append(kind: .accept, to: entry, key: key, number: seq) {
                StoredAccept.encode(
                    at: at, stubbed: stubbed, completed: completed, origin: origin, body: action, timer: timer,
                    into: &$0)
            })
    }

    func appendTimer(_ change: TimerChange, serial: UInt64) -> Bool {
        note(journal.append(kind: .timer, to: entry, key: key, number: serial) { change.encode(into: &$0) })
    }

    func appendCompletion(seq: UInt64) {
        note(journal.append(kind: .complete, to: entry, key: key, number: seq) { _ in })
    }

    func appendMutation(_ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool {
        appendState(.mutation, json, version: version, storageVersion: storageVersion)
    }

    func appendForcedState(_ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool {
        appendState(.forced, json, version: version, storageVersion: storageVersion)
    }

    /// Appends a state record; false when it is larger than a record.
    private func appendState(
        _ kind: RecordKind, _ json: [UInt8], version: UInt64, storageVersion: Int
    ) -> Bool {
        let limit = JournalRecord.maxBodyBytes - JournalRecord.headerBytes - StoredState.versionBytes
        guard json.count <= limit else { return false }
        return note(
            journal.append(kind: kind, to: entry, key: key, number: version) {
                StoredState.appendPayload(json, storageVersion: storageVersion, into: &$0)
            })
    }

    func appendSnapshot(_ snapshot: StoredSnapshot) -> Bool {
        note(journal.appendSnapshot(key: key, snapshot))
    }

    func appendActionLogCheckpoint(_ entries: ((ActionLogEntry) -> Void) -> Void) {
        var chunks = ActionLogCheckpoint()
        // Each chunk is written out once the buffer grows, so the log is never copied whole.
        let emit = { [journal, key] (kind: RecordKind, chunk: [ActionLogEntry]) in
            self.note(
                journal.append(kind: kind, key: key, number: chunk[chunk.count - 1].seq) {
                    StoredActionLog.encode(chunk, into: &$0)
                })
            journal.flushIfLarge()
        }
        entries { chunks.add($0, emit: emit) }
        guard let end = chunks.finish(emit: emit) else { return }
        note(journal.append(kind: .actionLogEnd, key: key, number: end) { _ in })
    }

    func release() {
        journal.markPassive(key: key)
    }

    /// Keeps the position of a record appended; false when none was (larger than a record).
    @discardableResult
    private func note(_ position: UInt64?) -> Bool {
        guard let position else { return false }
        // An accept (on a request's thread) and a mutation (on the runtime's) may note their
        // positions in either order: keep the higher.
        last.max(position, ordering: .acquiringAndReleasing)
        return true
    }
}
