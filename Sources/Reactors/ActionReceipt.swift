/// What a runtime did with a sent action at the moment it took it: its seq, and whether stub mode took it.
///
/// ```swift
/// let receipt = try runtime.submit(.increase)
/// log.append(seq: receipt.seq, stubbed: receipt.isStubbed)   // exactly what the runtime will do
/// ```
/// Stub mode is decided when an action is admitted, in seq order: an action admitted before stub mode
/// was enabled still runs, one admitted after is recorded and not run, however long either waits in the queue.
public struct ActionReceipt: Sendable, Equatable {
    /// The action's number: 1, 2, … continuing from a checkpoint.
    public var seq: UInt64
    /// True when stub mode took the action: it is recorded, and neither `mutate` nor `reduce` runs for it.
    public var isStubbed: Bool

    /// A receipt for action `seq`.
    @inlinable public init(seq: UInt64, isStubbed: Bool) {
        self.seq = seq
        self.isStubbed = isStubbed
    }
}
