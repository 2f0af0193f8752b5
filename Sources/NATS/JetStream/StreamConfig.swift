import JSONCodec

/// The configuration of a stream (the fields this project uses; the server fills in the rest).
public struct StreamConfig: Sendable, Equatable {
    /// When messages leave the stream.
    public enum Retention: String, Sendable { case limits, interest, workqueue }
    /// Where the stream keeps its messages.
    public enum Storage: String, Sendable { case file, memory }
    /// What happens at a limit: drop the oldest messages, or refuse new ones.
    public enum Discard: String, Sendable { case old, new }

    /// The stream's name (no dots, blanks or wildcards).
    public var name: String
    /// The subjects it captures (wildcards allowed).
    public var subjects: [String]
    /// When messages leave the stream (by limits, by default).
    public var retention = Retention.limits
    /// Where the stream keeps its messages (files, by default).
    public var storage = Storage.file
    /// How many servers keep a copy: 1, or 3 (or 5) on a cluster. A publish is acknowledged once a
    /// majority of them has stored it.
    public var replicas = 1
    /// Most messages kept (-1: no limit).
    public var maxMessages: Int64 = -1
    /// Most bytes kept (-1: no limit).
    public var maxBytes: Int64 = -1
    /// Oldest message kept (zero: no limit).
    public var maxAge: Duration = .zero
    /// Most messages kept per subject (-1: no limit; a KV bucket's history).
    public var maxMessagesPerSubject: Int64 = -1
    /// Largest message accepted (-1: the server's `max_payload`).
    public var maxMessageSize: Int32 = -1
    /// What happens at a limit (drop the oldest, by default).
    public var discard = Discard.old
    /// How long `Nats-Msg-Id` values are remembered for deduplication (nil: the server's 2 minutes).
    public var duplicateWindow: Duration?
    /// Whether `Nats-Rollup` headers may replace a subject's (or the stream's) messages.
    public var allowRollup = false
    /// Whether deleting single messages is refused.
    public var denyDelete = false
    /// Whether purging is refused.
    public var denyPurge = false
    /// Whether any replica may answer direct gets (fast reads that may lag the leader slightly).
    public var allowDirect = false

    /// A stream named `name` capturing `subjects`.
    public init(name: String, subjects: [String], replicas: Int = 1) {
        self.name = name
        self.subjects = subjects
        self.replicas = replicas
    }

    /// The configuration as JetStream's JSON.
    var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("name", .string(name)), ("subjects", .array(subjects.map { .string($0) })),
            ("retention", .string(retention.rawValue)),
            ("storage", .string(storage.rawValue)), ("num_replicas", .number(.int(Int64(replicas)))),
            ("max_msgs", .number(.int(maxMessages))), ("max_bytes", .number(.int(maxBytes))),
            ("max_age", .number(.int(maxAge.nanoseconds))),
            ("max_msgs_per_subject", .number(.int(maxMessagesPerSubject))),
            ("max_msg_size", .number(.int(Int64(maxMessageSize)))),
            ("max_consumers", -1), ("discard", .string(discard.rawValue)), ("allow_rollup_hdrs", .bool(allowRollup)),
            ("deny_delete", .bool(denyDelete)), ("deny_purge", .bool(denyPurge)), ("allow_direct", .bool(allowDirect)),
        ]
        if let duplicateWindow { fields.append(("duplicate_window", .number(.int(duplicateWindow.nanoseconds)))) }
        return .object(JSONObject(fields))
    }
}

/// What a stream is and holds, from `STREAM.INFO` (or the reply to a create or update).
public struct StreamInfo: Sendable, Equatable {
    /// The stream's name.
    public var name: String
    /// The subjects it captures.
    public var subjects: [String]
    /// How many servers keep a copy.
    public var replicas: Int
    /// Messages in the stream now.
    public var messages: UInt64
    /// Bytes in the stream now.
    public var bytes: UInt64
    /// The sequence of the oldest message kept (0 when empty).
    public var firstSequence: UInt64
    /// The sequence of the newest message (0 before the first).
    public var lastSequence: UInt64
    /// The server leading the stream's replicas, on a cluster.
    public var leader: String?
    /// The whole reply, for fields not modelled here.
    public var raw: JSONValue

    init(_ value: JSONValue) {
        let config = value["config"] ?? .null
        let state = value["state"] ?? .null
        name = config["name"]?.stringValue ?? ""
        subjects = config["subjects"]?.arrayValue?.compactMap(\.stringValue) ?? []
        replicas = config.int("num_replicas") ?? 1
        messages = state.uint64("messages") ?? 0
        bytes = state.uint64("bytes") ?? 0
        firstSequence = state.uint64("first_seq") ?? 0
        lastSequence = state.uint64("last_seq") ?? 0
        leader = value["cluster"]?["leader"]?.stringValue
        raw = value
    }
}
