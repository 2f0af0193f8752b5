import Dispatch
import NATS
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How long this instance may go on writing the sessions it claims: until a little before its
/// heartbeat could expire on the cluster. A heartbeat sent at `t` and acknowledged keeps the lease
/// until `t + ¾ TTL` (by this machine's monotonic clock, which runs on while the process is paused),
/// while the cluster keeps the heartbeat until at least `t + TTL`, so no other instance can take a
/// claim over while the lease holds. After a lapse (a pause, a partition) the claims are checked
/// again before anything more is written (``NATSStorage/renewClaims()``).
///
/// ```swift
/// let lease = OwnershipLease(ttl: .seconds(5))
/// let sent = OwnershipLease.now()
/// // … the heartbeat is acknowledged …
/// lease.renew(sentAt: sent)
/// lease.isValid   // true for 3.75 s
/// ```
final class OwnershipLease: Sendable {
    let ttl: Duration
    private let validUntil = Atomic<Int64>(0)
    /// Why the latest heartbeat failed, while it does.
    private let failure = Mutex<String?>("no heartbeat acknowledged yet")
    private let running = Atomic<Bool>(true)
    /// Wakes the heartbeat's pause early (at shutdown).
    private let wake = DispatchSemaphore(value: 0)

    init(ttl: Duration) {
        self.ttl = ttl
    }

    /// How often the heartbeat is sent: four times per TTL.
    var interval: Duration { ttl / 4 }

    /// Monotonic nanoseconds.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Whether this instance may write now.
    var isValid: Bool { Self.now() < validUntil.load(ordering: .acquiring) }

    /// Why not, when it may not.
    var unavailableReason: String? {
        if isValid { return nil }
        let cause = failure.withLock { $0 } ?? "the process was paused or JetStream did not answer in time"
        return "this instance's claim on its sessions lapsed (\(cause)); it writes again once its heartbeat is back"
    }

    /// Extends the lease after a heartbeat sent at `sentAt` was acknowledged.
    func renew(sentAt: Int64) {
        validUntil.store(sentAt + (ttl * 3 / 4).nanoseconds, ordering: .releasing)
        failure.withLock { $0 = nil }
    }

    /// Notes why the latest heartbeat failed.
    func heartbeatFailed(_ reason: String) {
        failure.withLock { $0 = reason }
    }

    /// Ends the lease (at shutdown), and wakes the heartbeat from its pause so it sees that.
    func stop() {
        running.store(false, ordering: .relaxed)
        validUntil.store(0, ordering: .releasing)
        failure.withLock { $0 = "the storage is closing" }
        wake.signal()
    }

    /// The heartbeat's pause between two renewals: `duration`, or less when the lease stops meanwhile.
    func pause(_ duration: Duration) {
        _ = wake.wait(timeout: .now() + duration.timeInterval)
    }

    var isRunning: Bool { running.load(ordering: .relaxed) }
}
