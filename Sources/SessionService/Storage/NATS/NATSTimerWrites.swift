import Dispatch
import Logs
import NATS
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
    /// Write even when the entry already says `wanted` (a load: see ``NATSTimerWrites/noteLoaded(_:at:)``).
    var force = false
    /// Told once no write of the session waits or runs (the claim is given up only then).
    var waiters: [@Sendable () -> Void] = []
}

/// Timers in the cluster: each session's soonest pending timer is written to its entry in the sessions bucket, so
/// every instance's timer index knows it (the bucket's watcher tells them) and fires it if its owner is gone by then.
/// Writes run in the background, one writer per session at a time; output that acknowledges a sooner timer waits
/// for its write (its watermark positions), and this instance gives a session's claim up only after them.
///
/// ```swift
/// timers.note("s1", at: dueAt, position: position)
/// _ = timers.waitUntilWritten("s1", limit: .seconds(1))
/// ```
final class NATSTimerWrites: Sendable {
    /// Timer times waiting to be written to session entries (``note(_:at:position:force:)``).
    private let writes = Mutex<[String: TimerWrite]>([:])
    /// Runs the writers.
    private let queue = DispatchQueue(label: "reactor.storage.nats.timers", attributes: .concurrent)
    private let catalog: NATSSessionCatalog
    private let claims: NATSClaims
    private let watermark: DurabilityWatermark
    private let logger: Logger
    /// Resolves positions that can never be stored as lost, with why (``NATSStorage/lost(_:shown:id:reason:)``).
    private let lost: @Sendable (_ positions: [UInt64], _ id: String, _ reason: String) -> Void

    init(
        catalog: NATSSessionCatalog, claims: NATSClaims, watermark: DurabilityWatermark, logger: Logger,
        lost: @escaping @Sendable (_ positions: [UInt64], _ id: String, _ reason: String) -> Void
    ) {
        self.catalog = catalog
        self.claims = claims
        self.watermark = watermark
        self.logger = logger
        self.lost = lost
    }

    /// Whether writing `at` as session `id`'s soonest timer tells the other instances of a sooner one than its
    /// entry names (a later or no time only costs them a look that finds nothing due).
    func isSooner(_ id: String, at: Int64?) -> Bool {
        guard let at else { return false }
        return catalog.meta(id)?.timer.map { at < $0 } ?? true
    }

    /// Session `id`'s soonest timer is now `at` (nil: none): written to its entry in the background, one
    /// writer per session taking the latest time each round, so the entry ends up saying what is so. With a
    /// `position`, output that acknowledges the change waits for the write (lost when it fails).
    func note(_ id: String, at: Int64?, position: UInt64? = nil, force: Bool = false) {
        let start = writes.withLock { writes -> Bool in
            var write = writes[id] ?? TimerWrite()
            write.wanted = at
            write.dirty = true
            write.force = write.force || force
            if let position { write.positions.append(position) }
            defer {
                write.running = true
                writes[id] = write
            }
            return !write.running
        }
        if start { queue.async { [self] in writeTimers(of: id) } }
    }

    /// Session `id` was just loaded here with `at` as its soonest timer: the entry is written again when the
    /// session has a timer or the entry names one. Always written, even with the same time: a new revision makes
    /// a late write of the previous owner (read before it) fail its compare-and-set. A session without timers
    /// whose entry names none (every counter) costs nothing.
    func noteLoaded(_ id: String, at: Int64?) {
        guard at != nil || catalog.meta(id)?.timer != nil else { return }
        note(id, at: at, force: true)
    }

    /// Whether a timer write of session `id` waits or runs (its entry is removed after it resolved its positions).
    func pending(_ id: String) -> Bool {
        writes.withLock { $0[id] != nil }
    }

    /// Calls `body` once no timer write of session `id` waits or runs (at once if none does).
    func whenWritten(_ id: String, _ body: @escaping @Sendable () -> Void) {
        let now = writes.withLock { writes -> Bool in
            guard writes[id] != nil else { return true }
            writes[id]?.waiters.append(body)
            return false
        }
        if now { body() }
    }

    /// Waits (at most `limit`) until no timer write of session `id` waits or runs: before this instance gives up
    /// the session's claim, so every write of it comes before anything the next owner writes.
    func waitUntilWritten(_ id: String, limit: Duration) -> Bool {
        let done = DispatchSemaphore(value: 0)
        whenWritten(id) { done.signal() }
        return done.wait(timeout: .now() + limit.timeInterval) == .success
    }

    /// Writes session `id`'s timer time until no newer one waits, then tells the waiters.
    private func writeTimers(of id: String) {
        var waiters: [@Sendable () -> Void] = []
        while true {
            let next = writes.withLock { writes -> (wanted: Int64?, positions: [UInt64], force: Bool)? in
                guard var write = writes[id], write.dirty else {
                    // Done under the lock a new time is noted under: that one starts a writer of its own.
                    waiters = writes.removeValue(forKey: id)?.waiters ?? []
                    return nil
                }
                defer {
                    write.dirty = false
                    write.force = false
                    write.positions = []
                    writes[id] = write
                }
                return (write.wanted, write.positions, write.force)
            }
            guard let next else { break }
            if !next.force, catalog.meta(id).map({ $0.timer == next.wanted }) ?? true {
                // Written already, or the session is gone (deleted: nothing of it is shown any more).
                watermark.resolve(next.positions)
                continue
            }
            switch writeTimer(id, next.wanted) {
            case .success:
                // Written, or the session is no longer this instance's: its owner wrote its own time at its load.
                watermark.resolve(next.positions)
            case .failure(let error):
                let reason = "its timer cannot be written to the sessions bucket (\(error.description))"
                if !next.positions.isEmpty { lost(next.positions, id, reason) }
                logger.warning(
                    "a session's timer cannot be written to the sessions bucket; other instances will not fire it "
                        + "if this one stops first",
                    ["session": .string(id), "error": .string(error.description)])
            }
        }
        for waiter in waiters { waiter() }
    }

    /// Writes `at` into session `id`'s entry while this instance holds the session's claim: a compare-and-set on
    /// the entry's revision, with the claim read (from the bucket's leader) between reading the entry and
    /// writing it. An owner that claims the session after that read writes the entry at its load, so this write
    /// then fails its compare-and-set and, read again, finds the claim gone: a previous owner's time, late or
    /// stale, never replaces what the session's owner wrote. Only `timer` changes; the rest of the entry
    /// (version, incarnation, token, unavailable) is written back as read. Success without a write when the
    /// session is not this instance's (or gone).
    private func writeTimer(_ id: String, _ at: Int64?) -> Result<Void, NATSError> {
        let proceed = { [self] () -> Result<Bool, NATSError> in
            claims.read(id).map { found in
                guard found?.claim == claims.own else {
                    logger.debug(
                        "a timer time of a session this instance no longer runs is not written",
                        ["session": .string(id), "owner": .string(found?.claim.instance ?? "nobody")])
                    return false
                }
                return true
            }
        }
        return catalog.update(id, what: "timer", proceed: proceed) { $0.timer = at }.map { _ in () }
    }
}
