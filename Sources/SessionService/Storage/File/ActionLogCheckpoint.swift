/// Cuts an action log into checkpoint chunks as its entries stream by, oldest first: each chunk holds
/// about ``StoredActionLog/chunkTargetBytes`` of entries (an entry larger than that goes alone, and
/// still fits a record: see ``JournalRecord/maxActionBytes``), so neither the writer nor a reader ever
/// holds more than one chunk of a checkpoint besides the log itself.
///
/// ```swift
/// var chunks = ActionLogCheckpoint()
/// for entry in log { try chunks.add(entry, emit: append) }
/// if let last = try chunks.finish(emit: append) { appendEnd(upTo: last) }
/// ```
struct ActionLogCheckpoint {
    private var pending: [ActionLogEntry] = []
    private var pendingBytes = 0
    private var started = false
    private var last: UInt64?

    /// Adds `entry`; when it does not fit the chunk being built, that chunk goes to `emit` first, with
    /// the kind its record takes (the first chunk starts the checkpoint).
    mutating func add(_ entry: ActionLogEntry, emit: (RecordKind, [ActionLogEntry]) throws -> Void) rethrows {
        let size = StoredActionLog.entryHeaderBytes + entry.action.count
        if !pending.isEmpty, pendingBytes + size > StoredActionLog.chunkTargetBytes { try emitPending(emit) }
        pending.append(entry)
        pendingBytes += size
        last = entry.seq
    }

    /// Emits the last chunk; returns the seq the checkpoint's end record covers, nil when there were no entries.
    mutating func finish(emit: (RecordKind, [ActionLogEntry]) throws -> Void) rethrows -> UInt64? {
        if !pending.isEmpty { try emitPending(emit) }
        return last
    }

    private mutating func emitPending(_ emit: (RecordKind, [ActionLogEntry]) throws -> Void) rethrows {
        try emit(started ? .actionLogNext : .actionLogFirst, pending)
        started = true
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }
}
