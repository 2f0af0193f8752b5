import JSONCodec

/// The configuration of a pull consumer (the fields this project uses).
public struct ConsumerConfig: Sendable, Equatable {
    /// Where delivery starts.
    public enum DeliverPolicy: Sendable, Equatable {
        case all
        case last
        case new
        case lastPerSubject
        case byStartSequence(UInt64)
    }

    /// Which deliveries must be acknowledged.
    public enum AckPolicy: String, Sendable { case none, all, explicit }

    /// A durable name; nil makes an ephemeral consumer, removed after ``inactiveThreshold``.
    public var durableName: String?
    /// Only messages on this subject (wildcards allowed).
    public var filterSubject: String?
    /// Where delivery starts.
    public var deliverPolicy = DeliverPolicy.all
    /// Which deliveries must be acknowledged (none, for a replay).
    public var ackPolicy = AckPolicy.none
    /// How long an idle ephemeral consumer lives.
    public var inactiveThreshold: Duration? = .seconds(30)
    /// Replicas of the consumer's state (nil: the stream's; 1 is enough for a one-off replay).
    public var replicas: Int?
    /// Whether the consumer's state lives in memory only.
    public var memoryStorage = false
    /// Makes it a push consumer: the server sends its messages to this subject as they come, without
    /// being asked (nil: a pull consumer, read with fetches).
    public var deliverSubject: String?
    /// For a push consumer: how often the server sends an empty status-100 heartbeat while it has
    /// nothing to deliver, so the reader can tell a quiet consumer from a lost one.
    public var idleHeartbeat: Duration?

    /// An ephemeral consumer delivering everything without acknowledgements.
    public init(filterSubject: String? = nil, deliverPolicy: DeliverPolicy = .all, ackPolicy: AckPolicy = .none) {
        self.filterSubject = filterSubject
        self.deliverPolicy = deliverPolicy
        self.ackPolicy = ackPolicy
    }

    var json: JSONValue {
        var fields: [(String, JSONValue)] = [("ack_policy", .string(ackPolicy.rawValue)), ("replay_policy", "instant")]
        switch deliverPolicy {
        case .all: fields.append(("deliver_policy", "all"))
        case .last: fields.append(("deliver_policy", "last"))
        case .new: fields.append(("deliver_policy", "new"))
        case .lastPerSubject: fields.append(("deliver_policy", "last_per_subject"))
        case .byStartSequence(let sequence):
            fields.append(("deliver_policy", "by_start_sequence"))
            fields.append(("opt_start_seq", .number(.uint(sequence))))
        }
        if let durableName { fields.append(("durable_name", .string(durableName))) }
        if let filterSubject { fields.append(("filter_subject", .string(filterSubject))) }
        if let inactiveThreshold { fields.append(("inactive_threshold", .number(.int(inactiveThreshold.nanoseconds)))) }
        if let replicas { fields.append(("num_replicas", .number(.int(Int64(replicas))))) }
        if memoryStorage { fields.append(("mem_storage", true)) }
        if let deliverSubject { fields.append(("deliver_subject", .string(deliverSubject))) }
        if let idleHeartbeat { fields.append(("idle_heartbeat", .number(.int(idleHeartbeat.nanoseconds)))) }
        return .object(JSONObject(fields))
    }
}

/// A consumer as the server reports it.
public struct ConsumerInfo: Sendable, Equatable {
    /// The stream it reads.
    public var stream: String
    /// Its name (generated for an ephemeral consumer).
    public var name: String
    /// Messages it has yet to deliver.
    public var pending: UInt64

    init(_ value: JSONValue) {
        stream = value["stream_name"]?.stringValue ?? ""
        name = value["name"]?.stringValue ?? ""
        pending = value.uint64("num_pending") ?? 0
    }
}
