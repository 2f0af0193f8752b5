import Synchronization

/// The ids of one process's publishes: this start's incarnation and a counter, so no publish of any instance uses
/// another's id and a retried one is recognised (by JetStream's duplicate window for `Nats-Msg-Id`, by the lost
/// acknowledgement's check for a session log's own batch header).
final class NATSMessageIDs: Sendable {
    /// This process's identity among the instance's starts: claims name it with the instance.
    let incarnation: String
    private let counter = Atomic<UInt64>(0)
    /// Whether session logs' batches carry their id as `Nats-Msg-Id` (see ``NATSSessionLog/batchHeader``): until
    /// the connected server is known to hold expected sequences across proposals in flight.
    let carriedByBatches = Atomic<Bool>(true)

    init(incarnation: String) {
        self.incarnation = incarnation
    }

    /// A `Nats-Msg-Id` no other publish of any instance uses.
    func next() -> String {
        "\(incarnation).\(counter.wrappingAdd(1, ordering: .relaxed).newValue)"
    }
}
