/// A test's hand in the loads of one storage (set through `@testable import`; nil in service): it is called at
/// each step of a load, and can make the load's writes go without their single-writer checks, as nats-server 2.9
/// does under load in a clustered stream (nats-server#4320: a compare-and-set or an expected subject sequence is
/// checked before the Raft proposal, not when it is applied, so two writers expecting the same sequence both land).
/// Two loads of one session held step by step this way meet exactly as that race makes them meet.
///
/// ```swift
/// storage.claims.interference.withLock {
///     $0 = LoadInterference(dropsChecks: true) { id, step in if step == .subjectRead { gate.wait() } }
/// }
/// ```
struct LoadInterference: Sendable {
    /// Where a load is when the test's hook runs.
    enum Step: Sendable, Hashable {
        /// The claim was read (before this instance writes its own).
        case claimRead
        /// This instance's claim was written (before it is read back).
        case claimWritten
        /// The session's records were read (before the fence is published).
        case subjectRead
        /// The fence was acknowledged (before the check for a rival's write in front of it).
        case fenceAcknowledged
    }

    /// Whether the load's claim and fence are written without their compare-and-set (a put, a publish that
    /// expects nothing): what nats-server#4320 amounts to for the second of two writers.
    var dropsChecks = false
    /// Called on the loading thread at each step of a load of session `id`; it may block (bounded) to order
    /// two loads.
    var at: @Sendable (_ id: String, _ step: Step) -> Void
}
