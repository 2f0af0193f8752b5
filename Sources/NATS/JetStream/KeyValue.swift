/// A key-value bucket (ADR-8) over JetStream: each key is the subject `$KV.<bucket>.<key>`, each
/// write a message, each revision that message's sequence. Writes can be made conditional on the
/// revision, which is how a single writer is enforced: ``update(_:value:revision:)`` fails with
/// JetStream error 10071 (``JetStreamAPIError/wrongLastSequence``) when someone else wrote first.
///
/// ```swift
/// let owners = try await js.keyValue(KeyValueConfig(bucket: "owners", replicas: 3))
/// let revision = try await owners.create("session-1", value: Array("node-a".utf8))
/// _ = try await owners.update("session-1", value: Array("node-b".utf8), revision: revision)
/// ```
public struct KeyValue: Sendable {
    /// The JetStream context it works through.
    public let jetStream: JetStream
    /// The bucket's name.
    public let bucket: String

    /// The stream that holds the bucket.
    public var streamName: String { "KV_\(bucket)" }

    /// A handle on an existing bucket (nothing is checked or created).
    public init(jetStream: JetStream, bucket: String) {
        self.jetStream = jetStream
        self.bucket = bucket
    }

    /// The subject of `key`, or why it is not a valid key (`[-/_=.A-Za-z0-9]+`, not starting or ending with `.`).
    public func subject(for key: String) throws(NATSError) -> String {
        let bytes = key.utf8
        guard !bytes.isEmpty, bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: "."),
            bytes.allSatisfy({ $0.isKeyCharacter }),
            ClientCommand.isValidSubject(key)
        else {
            throw NATSError.invalidArgument(
                "invalid key \"\(key)\" for bucket \(bucket): use letters, digits and - / _ = . (not at the ends)")
        }
        return "$KV.\(bucket).\(key)"
    }

    /// The latest entry of `key`, delete and purge markers included, by direct get; nil if never written.
    public func entry(_ key: String, completion: @escaping @Sendable (Result<KeyValueEntry?, NATSError>) -> Void)
        throws(NATSError)
    {
        let bucket = self.bucket
        let prefixLength = "$KV.\(bucket).".utf8.count
        try jetStream.directGet(stream: streamName, .lastBySubject(try subject(for: key))) { result in
            completion(
                result.map { message in message.map { Self.entry($0, bucket: bucket, prefixLength: prefixLength) } })
        }
    }

    /// The latest entry of `key`, markers included, read from the stream's leader (consistent with
    /// every acknowledged write); calls `completion` on the connection's thread, nil if never written.
    public func consistentEntry(
        _ key: String, completion: @escaping @Sendable (Result<KeyValueEntry?, NATSError>) -> Void
    ) throws(NATSError) {
        let bucket = self.bucket
        let prefixLength = "$KV.\(bucket).".utf8.count
        try jetStream.getMessage(stream: streamName, .lastBySubject(try subject(for: key))) { result in
            completion(
                result.map { message in message.map { Self.entry($0, bucket: bucket, prefixLength: prefixLength) } })
        }
    }

    /// The latest entry of `key`, markers included; nil if never written. With `consistent`, read from
    /// the stream's leader (sees every acknowledged write) instead of any replica.
    public func entry(_ key: String, consistent: Bool = false) async throws(NATSError) -> KeyValueEntry? {
        try await JetStream.awaiting {
            (completion: @escaping @Sendable (Result<KeyValueEntry?, NATSError>) -> Void) throws(NATSError) in
            if consistent {
                try consistentEntry(key, completion: completion)
            } else {
                try entry(key, completion: completion)
            }
        }
    }

    /// The current value of `key`: nil if it was never written, or deleted or purged since.
    public func get(_ key: String, consistent: Bool = false) async throws(NATSError) -> KeyValueEntry? {
        guard let entry = try await entry(key, consistent: consistent), entry.operation == .put else { return nil }
        return entry
    }

    /// Writes `value` whatever the current revision; calls `completion` with the new revision.
    public func put(_ key: String, value: [UInt8], completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void)
        throws(NATSError)
    {
        try write(key, value: value, headers: nil, expected: nil, completion: completion)
    }

    /// Writes `value` only if the key's latest revision is `revision` (10071 otherwise).
    public func update(
        _ key: String, value: [UInt8], revision: UInt64,
        completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void
    ) throws(NATSError) {
        try write(key, value: value, headers: nil, expected: revision, completion: completion)
    }

    /// Writes `value` only if the key has no value: never written, deleted or purged (10071 otherwise).
    public func create(
        _ key: String, value: [UInt8], completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void
    ) throws(NATSError) {
        try write(key, value: value, headers: nil, expected: 0) { result in
            guard case .failure(let error) = result, error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence
            else {
                completion(result)
                return
            }
            // ADR-8: a deleted or purged key may be created again, conditional on its marker's revision.
            do throws(NATSError) {
                try entry(key) { found in
                    guard case .success(let latest?) = found, latest.operation != .put else {
                        completion(.failure(error))
                        return
                    }
                    do throws(NATSError) {
                        try write(key, value: value, headers: nil, expected: latest.revision, completion: completion)
                    } catch {
                        completion(.failure(error))
                    }
                }
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Writes `value` whatever the current revision; returns the new revision.
    public func put(_ key: String, value: [UInt8]) async throws(NATSError) -> UInt64 {
        try await JetStream.awaiting {
            (completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void) throws(NATSError) in
            try put(key, value: value, completion: completion)
        }
    }

    /// Writes `value` only if the key's latest revision is `revision`; returns the new revision.
    public func update(_ key: String, value: [UInt8], revision: UInt64) async throws(NATSError) -> UInt64 {
        try await JetStream.awaiting {
            (completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void) throws(NATSError) in
            try update(key, value: value, revision: revision, completion: completion)
        }
    }

    /// Writes `value` only if the key has no value; returns the new revision.
    public func create(_ key: String, value: [UInt8]) async throws(NATSError) -> UInt64 {
        try await JetStream.awaiting {
            (completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void) throws(NATSError) in
            try create(key, value: value, completion: completion)
        }
    }

    /// Deletes the key, keeping its history (a `DEL` marker); only at `revision` if given.
    @discardableResult
    public func delete(_ key: String, revision: UInt64? = nil) async throws(NATSError) -> UInt64 {
        try await JetStream.awaiting {
            (completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void) throws(NATSError) in
            try delete(key, revision: revision, completion: completion)
        }
    }

    /// Deletes the key (a `DEL` marker), only at `revision` if given; calls `completion` with the
    /// marker's revision.
    public func delete(
        _ key: String, revision: UInt64? = nil, completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void
    ) throws(NATSError) {
        try write(key, value: [], headers: ["KV-Operation": "DEL"], expected: revision, completion: completion)
    }

    /// Removes the key and its history, leaving one `PURGE` marker; only at `revision` if given.
    @discardableResult
    public func purge(_ key: String, revision: UInt64? = nil) async throws(NATSError) -> UInt64 {
        try await JetStream.awaiting {
            (completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void) throws(NATSError) in
            try write(
                key, value: [], headers: ["KV-Operation": "PURGE", "Nats-Rollup": "sub"], expected: revision,
                completion: completion)
        }
    }

    private func write(
        _ key: String, value: [UInt8], headers: NATSHeaders?, expected: UInt64?,
        completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void
    ) throws(NATSError) {
        let options = PublishOptions(expectedLastSubjectSequence: expected)
        try jetStream.publish(try subject(for: key), payload: value, headers: headers, options: options) { result in
            completion(result.map(\.sequence))
        }
    }

    private static func entry(_ message: StoredMessage, bucket: String, prefixLength: Int) -> KeyValueEntry {
        let operation = message.headers["KV-Operation"].flatMap(KeyValueOperation.init(rawValue:)) ?? .put
        let key = String(decoding: message.subject.utf8.dropFirst(prefixLength), as: UTF8.self)
        return KeyValueEntry(
            bucket: bucket, key: key, value: message.payload, revision: message.sequence, operation: operation)
    }
}

extension JetStream {
    /// Creates the bucket, or updates its settings, and returns it (safe to call on every start).
    public func keyValue(_ config: KeyValueConfig) async throws(NATSError) -> KeyValue {
        try config.validate()
        _ = try await createOrUpdateStream(config.streamConfig)
        return KeyValue(jetStream: self, bucket: config.bucket)
    }
}

extension KeyValue {
    /// A watcher of the whole bucket: the latest message of every key first (delete and purge markers included),
    /// then every write as it is stored, in order, to `apply` on the connection's thread (it must not block).
    /// Nothing is read until ``OrderedConsumer/start()``.
    public func watcher(apply: @escaping @Sendable (StoredMessage) -> Void) -> OrderedConsumer {
        OrderedConsumer(
            jetStream: jetStream, stream: streamName, filter: "$KV.\(bucket).>", start: .lastPerSubject, handler: apply)
    }
}
