import Dispatch
import Synchronization

/// One session's timer time waiting to be written to its entry in the sessions bucket.
struct TimerWrite: Sendable {
    /// The soonest timer to write (nil: none).
    var wanted: Int64?
    /// Whether `wanted` changed since the writer last took it.
    var dirty = false
    /// Whether a writer runs for the session (one at a time, so the entry ends up with the latest time).
    var running = false
    /// Watermark positions that wait for this write: output that acknowledges a sooner timer waits until
    /// the other instances can know it.
    var positions: [UInt64] = []
}

// Timers in the cluster: each session's soonest pending timer is written to its entry in the sessions bucket,
// so every instance's timer index knows it (the watcher tells them) and fires it if its owner is gone by then.
extension NATSStorage {
    /// The sessions whose entry names a pending timer (start-up), with when it falls due.
    func timerHints() -> [(id: String, at: Int64)] {
        catalog.withLock { catalog in
            catalog.entries.compactMap { id, entry in
                guard let meta = entry.meta, meta.unavailable == nil, let at = meta.timer else { return nil }
                return (id, at)
            }
        }
    }

    /// Whether writing `at` as session `id`'s soonest timer tells the other instances of a sooner one than its
    /// entry names (a later or no time only costs them a look that finds nothing due).
    func timerIsSooner(_ id: String, at: Int64?) -> Bool {
        guard let at else { return false }
        return catalog.withLock { $0[id]?.timer }.map { at < $0 } ?? true
    }

    /// Session `id`'s soonest timer is now `at` (nil: none): written to its entry in the background, one
    /// writer per session taking the latest time each round, so the entry ends up saying what is so. With a
    /// `position`, output that acknowledges the change waits for the write (lost when it fails).
    func noteTimer(_ id: String, at: Int64?, position: UInt64? = nil) {
        let start = timerWrites.withLock { writes -> Bool in
            var write = writes[id] ?? TimerWrite()
            write.wanted = at
            write.dirty = true
            if let position { write.positions.append(position) }
            defer {
                write.running = true
                writes[id] = write
            }
            return !write.running
        }
        if start { timerQueue.async { [self] in writeTimers(of: id) } }
    }

    /// Writes session `id`'s timer time until no newer one waits.
    private func writeTimers(of id: String) {
        while true {
            let next = timerWrites.withLock { writes -> (wanted: Int64?, positions: [UInt64])? in
                guard var write = writes[id], write.dirty else {
                    writes[id] = nil
                    return nil
                }
                defer {
                    write.dirty = false
                    write.positions = []
                    writes[id] = write
                }
                return (write.wanted, write.positions)
            }
            guard let next else { return }
            let current = catalog.withLock { $0[id] }
            guard let current, current.timer != next.wanted else {
                // Written already, or the session is gone (deleted: nothing of it is shown any more).
                watermark.resolve(next.positions)
                continue
            }
            switch updateMeta(id, { $0.timer = next.wanted }) {
            case .success:
                watermark.resolve(next.positions)
            case .failure(let error):
                let reason = "its timer cannot be written to the sessions bucket (\(error.description))"
                if !next.positions.isEmpty { lost(next.positions, shown: true, id: id, reason: reason) }
                logger.warning(
                    "a session's timer cannot be written to the sessions bucket; other instances will not fire it "
                        + "if this one stops first",
                    ["session": .string(id), "error": .string(error.description)])
            }
        }
    }
}
