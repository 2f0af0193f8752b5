import Synchronization

/// The `Nats-Msg-Id`s of one process's publishes: this start's incarnation and a counter, so no publish of any
/// instance uses another's id and a retried one is recognised (JetStream's duplicate window).
final class NATSMessageIDs: Sendable {
    /// This process's identity among the instance's starts: claims name it with the instance.
    let incarnation: String
    private let counter = Atomic<UInt64>(0)

    init(incarnation: String) {
        self.incarnation = incarnation
    }

    /// A `Nats-Msg-Id` no other publish of any instance uses.
    func next() -> String {
        "\(incarnation).\(counter.wrappingAdd(1, ordering: .relaxed).newValue)"
    }
}
