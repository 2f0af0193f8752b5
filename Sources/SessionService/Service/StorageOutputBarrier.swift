import HTTPServer

/// The storage's durable watermark as the HTTP server's output barrier: an answer or event leaves
/// once the records it shows are durable, and waits (its loop does not) while they are not; an answer
/// acknowledging a change whose records the backend failed to store becomes a 503.
final class StorageOutputBarrier: OutputBarrier {
    let storage: any StorageBackend
    let metrics: ServiceMetrics

    init(_ storage: any StorageBackend, metrics: ServiceMetrics) {
        self.storage = storage
        self.metrics = metrics
        losesPositions = storage.losesPositions
    }

    var position: UInt64 { storage.appendedPosition }

    func isDurable(_ position: UInt64) -> Bool { storage.isDurable(position) }

    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) { storage.whenDurable(position, wake) }

    /// Output showing one session (exact) waits for that session's records only.
    func isDurableExactly(_ position: UInt64) -> Bool { storage.isDurableExactly(position) }

    func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        storage.whenDurableExactly(position, wake)
    }

    /// Asked once `isDurable` said no, or for a lost position: while the backend cannot store records,
    /// what it has not stored failed (an answer acknowledging it becomes a 503).
    func failure(_ position: UInt64) -> String? { storage.lossReason(position) ?? storage.unavailableReason }

    /// Read once: whether the backend may lose records (another instance took their session over).
    let losesPositions: Bool

    func isLost(_ position: UInt64) -> Bool { storage.lossReason(position) != nil }

    /// Counted apart: the access log and the request counter show the status the route chose.
    func refusedHeldOutput(_ position: UInt64, reason: String) { metrics.answersNotStored.increment() }
}
