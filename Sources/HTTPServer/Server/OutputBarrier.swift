/// Holds output back until what it shows is durable: the server asks it, before writing, whether the
/// position an answer or an event depends on is durable, and parks output that is not (the loop goes
/// on with other connections) until the barrier wakes it. Positions grow with every record a store
/// appends; output depends, unless its producer says otherwise
/// (``HTTPResponseWriter/respond(_:dependingOn:)``), on everything appended when it is queued. A
/// producer that names a position says the output shows that position's records (its session's
/// newest), which matters with a barrier that may lose positions (``losesPositions``).
///
/// ```swift
/// final class Journal: OutputBarrier {
///     let appended = Atomic<UInt64>(0), written = Atomic<UInt64>(0)
///     var position: UInt64 { appended.load(ordering: .acquiring) }
///     func isDurable(_ position: UInt64) -> Bool { written.load(ordering: .acquiring) >= position }
///     func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
///         waiters.append((position, wake))
///     }
/// }
/// configuration.outputBarrier = journal
/// ```
public protocol OutputBarrier: AnyObject, Sendable {
    /// The position output queued now depends on: everything appended so far.
    var position: UInt64 { get }
    /// Whether everything up to `position` is durable. Called on an event loop right before it
    /// writes: it may do quick local work to make it so (a `write(2)` to a file), never wait on a
    /// network.
    func isDurable(_ position: UInt64) -> Bool
    /// Calls `wake`, on any thread, once `position` is durable (at once if it already is), and may
    /// call it earlier when storing fails (the connection then asks ``failure(_:)``). `wake` only
    /// hands work to the connection's loop, so it may be called with the barrier's locks held, also
    /// from inside `isDurable`.
    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void)
    /// Why `position` cannot be made durable now, nil while it is durable or on its way: an answer
    /// queued as refusable (``HTTPResponseWriter/respond(_:dependingOn:refusedUnlessStored:)``)
    /// then leaves as a 503 ``HTTPRejection/Kind/notStored`` instead. Asked after `isDurable` said no.
    func failure(_ position: UInt64) -> String?
    /// Whether positions may be lost: records that can never be stored (their session was taken over
    /// by another process), which the watermark nevertheless passes so other output goes on. Read
    /// once, when the server starts; false unless the barrier says so.
    var losesPositions: Bool { get }
    /// Whether the records at `position` can never be stored: output a producer said shows them is
    /// then never written (an answer becomes a 503 naming ``failure(_:)``'s reason, a stream is
    /// closed). Asked only when ``losesPositions``, for positions the watermark reached.
    func isLost(_ position: UInt64) -> Bool
    /// Told once for each held answer replaced by a 503 because ``failure(_:)`` gave a reason: the
    /// responder had already chosen its status (an access log or request counter shows that one), so
    /// this is where the replacement can be counted.
    func refusedHeldOutput(_ position: UInt64, reason: String)
    /// Whether the records at `position` and every earlier record of the same producer (a session) are
    /// durable, whatever other producers' earlier records: what output a producer said shows `position`
    /// (exact output) waits for, with a barrier that ``losesPositions``. Defaults to ``isDurable(_:)``.
    func isDurableExactly(_ position: UInt64) -> Bool
    /// Calls `wake` once ``isDurableExactly(_:)`` holds for `position` (or, as ``whenDurable(_:_:)``, when
    /// storing fails). Defaults to ``whenDurable(_:_:)``.
    func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void)
}

extension OutputBarrier {
    /// A barrier that never gives up on a position: held output waits for it or for the write timeout.
    public func failure(_ position: UInt64) -> String? { nil }
    /// Every record appended is eventually stored or the store fails as a whole.
    public var losesPositions: Bool { false }
    /// Never lost.
    public func isLost(_ position: UInt64) -> Bool { false }
    /// Nothing to count.
    public func refusedHeldOutput(_ position: UInt64, reason: String) {}
    /// Durable when everything up to it is.
    public func isDurableExactly(_ position: UInt64) -> Bool { isDurable(position) }
    /// Woken when everything up to it is durable.
    public func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        whenDurable(position, wake)
    }
}
