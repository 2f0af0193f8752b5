/// One event of a session, made once and shared by every subscriber that gets it: a state (the whole
/// state, or the part a subscriber's `select` picks), a patch to it from the version before, or a pulse,
/// as JSON, with the wire forms that transports made of it. Touched only under its session's lock.
public final class SessionEvent: @unchecked Sendable {
    /// What the event is.
    public enum Kind: Sendable, Equatable {
        /// State `version` (whole, or selected).
        case state(version: UInt64)
        /// The RFC 6902 patch that turns the state (or selected value) before into that of `version`.
        case patch(version: UInt64)
        /// The `count`th assignment of `@Pulse` property `name`.
        case pulse(name: String, count: UInt64)
    }

    public let kind: Kind
    /// The state as one line of JSON, the patch's array of operations, or the pulse's value.
    public let json: [UInt8]
    /// The storage position of the session's records it shows (its newest when the event was made;
    /// 0 for a session that stores nothing here): a transport sends it once that one is durable, and
    /// never if it is lost.
    public let position: UInt64
    // The wire form of the first transport inline (a session's subscribers nearly always share one),
    // those of others in a list. Unchecked: only touched under the session's lock, never reentered
    // (`make` sees the event, not these), and a checked access costs ~80 instructions per subscriber.
    @exclusivity(unchecked) private var firstTransport: ObjectIdentifier?
    @exclusivity(unchecked) private var firstWire: [UInt8] = []
    @exclusivity(unchecked) private var otherWires: [(transport: ObjectIdentifier, wire: [UInt8])] = []

    /// An event from its kind, JSON and the position of the records it shows.
    public init(_ kind: Kind, json: [UInt8], position: UInt64) {
        self.kind = kind
        self.json = json
        self.position = position
    }

    /// The wire form of this event for `transport` (a sink type's identity): made by `make` for its
    /// first sink and shared by the others, so a state goes out encoded once however many subscribers
    /// get it. Returned owned (one reference more), for a sink to move into its queue.
    @inline(__always)
    public func wire(for transport: ObjectIdentifier, make: (SessionEvent) -> [UInt8]) -> [UInt8] {
        if firstTransport == transport { return firstWire }
        return wire(for: transport, make)
    }

    /// The wire form for `transport` when it is not the first transport's: made now, or found in the list.
    private func wire(for transport: ObjectIdentifier, _ make: (SessionEvent) -> [UInt8]) -> [UInt8] {
        guard firstTransport != nil else {
            firstWire = make(self)
            firstTransport = transport
            return firstWire
        }
        if let made = otherWires.first(where: { $0.transport == transport }) { return made.wire }
        let wire = make(self)
        otherWires.append((transport, wire))
        return wire
    }
}
