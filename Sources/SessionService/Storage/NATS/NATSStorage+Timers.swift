import Dispatch
import Synchronization

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

    /// Session `id`'s soonest timer is now `at` (nil: none): written to its entry in the background, one
    /// session's writes in order and only the latest of those waiting, so the entry ends up saying what is so.
    func noteTimer(_ id: String, at: Int64?) {
        let first = timerWrites.withLock { waiting -> Bool in
            defer { waiting[id] = .some(at) }
            return waiting[id] == nil
        }
        guard first else { return }
        timerQueue.async { [self] in
            guard let wanted = timerWrites.withLock({ $0.removeValue(forKey: id) }) else { return }
            guard catalog.withLock({ $0[id] }).map({ $0.timer != wanted }) ?? false else { return }
            if case .failure(let error) = updateMeta(id, { $0.timer = wanted }) {
                logger.warning(
                    "a session's timer cannot be written to the sessions bucket; other instances will not fire it "
                        + "if this one stops first",
                    ["session": .string(id), "error": .string(error.description)])
            }
        }
    }
}
