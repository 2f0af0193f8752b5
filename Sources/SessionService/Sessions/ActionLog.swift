/// One accepted action as the admin action log shows it.
public struct ActionLogEntry: Sendable, Equatable {
    public var seq: UInt64
    /// When it was accepted, nanoseconds since the Unix epoch.
    public var at: Int64
    /// The action exactly as the client sent it (valid JSON: it decoded before it was accepted).
    public var action: [UInt8]
    public var stubbed: Bool
    /// Accepted before a crash that stopped its effects before they finished; never re-run.
    public var interrupted: Bool

    @inlinable
    public init(seq: UInt64, at: Int64, action: [UInt8], stubbed: Bool, interrupted: Bool = false) {
        self.seq = seq
        self.at = at
        self.action = action
        self.stubbed = stubbed
        self.interrupted = interrupted
    }
}

/// A session's action log: the newest `limit` entries, oldest first, in `seq` order.
public struct ActionLog: Sendable {
    @usableFromInline var entries: [ActionLogEntry] = []
    // 32-bit: part of every idle session (the configured limit is at most 10,000,000).
    /// Index of the oldest entry once the buffer is full (a ring).
    @usableFromInline var storedHead: Int32 = 0
    @usableFromInline let storedLimit: Int32

    @inlinable var head: Int {
        get { Int(storedHead) }
        set { storedHead = Int32(truncatingIfNeeded: newValue) }
    }

    @inlinable var limit: Int { Int(storedLimit) }

    public init(limit: Int) { storedLimit = Int32(clamping: limit) }

    /// Records an entry; callers append in `seq` order. Drops the oldest beyond `limit`.
    @inlinable
    public mutating func append(_ entry: ActionLogEntry) {
        guard limit > 0 else { return }
        if entries.count < limit {
            entries.append(entry)
        } else {
            entries[head] = entry
            head = (head + 1) % limit
        }
    }

    public var count: Int { entries.count }

    /// The seq of the oldest retained entry.
    public var oldestSeq: UInt64? { entries.isEmpty ? nil : entries[entries.count == limit ? head : 0].seq }

    /// Every entry, oldest first.
    public var all: [ActionLogEntry] {
        guard entries.count == limit, head > 0 else { return entries }
        return Array(entries[head...] + entries[..<head])
    }

    /// Entries with `seq > since`, at most `limit` of them, and the `seq` to ask from next when more remain.
    public func entries(since: UInt64, limit: Int) -> (entries: [ActionLogEntry], next: UInt64?) {
        var result: [ActionLogEntry] = []
        let total = entries.count
        // The ring is sorted by seq from `head`; binary-search the first entry after `since`.
        var low = 0
        var high = total
        while low < high {
            let middle = (low + high) / 2
            if entries[(head + middle) % max(total, 1)].seq <= since { low = middle + 1 } else { high = middle }
        }
        var index = low
        while index < total, result.count < limit {
            result.append(entries[(head + index) % total])
            index += 1
        }
        let next = index < total ? result.last?.seq : nil
        return (result, next)
    }
}
