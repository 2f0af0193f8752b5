/// A key-value bucket's settings, stored as the stream `KV_<bucket>` on `$KV.<bucket>.>` with the
/// settings the KV specification (ADR-8) gives every bucket: history as `max_msgs_per_subject`,
/// `discard: new`, rollup headers allowed, deletes of single messages denied, direct gets allowed,
/// and a duplicate window no longer than the TTL.
public struct KeyValueConfig: Sendable, Equatable {
    /// The bucket's name (`[A-Za-z0-9_-]+`).
    public var bucket: String
    /// Values kept per key, 1 to 64.
    public var history = 1
    /// How long values live (zero: forever).
    public var ttl: Duration = .zero
    /// Copies on a cluster (1, 3 or 5).
    public var replicas = 1
    /// Largest value accepted (-1: the server's `max_payload`).
    public var maxValueSize: Int32 = -1
    /// Most bytes the bucket may hold (-1: no limit).
    public var maxBytes: Int64 = -1
    /// Where the bucket keeps its values.
    public var storage = StreamConfig.Storage.file

    /// A bucket named `bucket`.
    public init(bucket: String, history: Int = 1, ttl: Duration = .zero, replicas: Int = 1) {
        self.bucket = bucket
        self.history = history
        self.ttl = ttl
        self.replicas = replicas
    }

    /// The stream that holds the bucket.
    public var streamConfig: StreamConfig {
        var config = StreamConfig(name: "KV_\(bucket)", subjects: ["$KV.\(bucket).>"], replicas: replicas)
        config.maxMessagesPerSubject = Int64(history)
        config.maxAge = ttl
        config.maxBytes = maxBytes
        config.maxMessageSize = maxValueSize
        config.storage = storage
        config.discard = .new
        config.allowRollup = true
        config.denyDelete = true
        config.allowDirect = true
        let twoMinutes = Duration.seconds(120)
        config.duplicateWindow = ttl > .zero && ttl < twoMinutes ? ttl : twoMinutes
        return config
    }

    /// Why the settings cannot make a bucket, if they cannot.
    func validate() throws(NATSError) {
        guard !bucket.isEmpty, bucket.utf8.allSatisfy({ $0.isBucketCharacter }) else {
            throw NATSError.invalidArgument("invalid key-value bucket name \"\(bucket)\": use letters, digits, - and _")
        }
        guard (1...64).contains(history) else {
            throw NATSError.invalidArgument("a key-value bucket keeps 1 to 64 values per key, not \(history)")
        }
    }
}

/// What an entry of a bucket records.
public enum KeyValueOperation: String, Sendable {
    /// A value was put.
    case put = "PUT"
    /// The key was deleted (its history is kept).
    case delete = "DEL"
    /// The key was purged (its history is gone).
    case purge = "PURGE"
}

/// One entry of a key-value bucket.
public struct KeyValueEntry: Sendable, Equatable {
    /// The bucket it is in.
    public var bucket: String
    /// Its key.
    public var key: String
    /// The value (empty for delete and purge markers).
    public var value: [UInt8]
    /// The entry's revision: its stream sequence, what ``KeyValue/update(_:value:revision:)`` expects.
    public var revision: UInt64
    /// What the entry records: a value, a delete or a purge.
    public var operation: KeyValueOperation

    /// An entry from its parts.
    public init(bucket: String, key: String, value: [UInt8], revision: UInt64, operation: KeyValueOperation) {
        self.bucket = bucket
        self.key = key
        self.value = value
        self.revision = revision
        self.operation = operation
    }
}

extension UInt8 {
    /// `[A-Za-z0-9_-]`.
    var isBucketCharacter: Bool {
        (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z"))
            || (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9")) || self == UInt8(ascii: "_")
            || self == UInt8(ascii: "-")
    }

    /// `[-/_=.A-Za-z0-9]`, the characters of a key.
    var isKeyCharacter: Bool {
        isBucketCharacter || self == UInt8(ascii: "/") || self == UInt8(ascii: "=") || self == UInt8(ascii: ".")
    }
}
