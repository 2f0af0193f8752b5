import JSONCodec
import Synchronization

/// Pull consumers: create, fetch batches, delete; and a replay of one subject built on them.
extension JetStream {
    /// Creates a consumer on `stream` (durable if the config names one, else ephemeral).
    public func createConsumer(stream: String, _ config: ConsumerConfig) async throws(NATSError) -> ConsumerInfo {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<ConsumerInfo, NATSError>) -> Void) throws(NATSError) in
            try createConsumer(stream: stream, config, completion: completion)
        }
    }

    /// Creates a consumer and calls `completion` (on the connection's thread) with what the server made.
    public func createConsumer(
        stream: String, _ config: ConsumerConfig,
        completion: @escaping @Sendable (Result<ConsumerInfo, NATSError>) -> Void
    ) throws(NATSError) {
        let api = config.durableName.map { "CONSUMER.DURABLE.CREATE.\(stream).\($0)" } ?? "CONSUMER.CREATE.\(stream)"
        try request(api, body: ["stream_name": .string(stream), "config": config.json]) {
            completion($0.map(ConsumerInfo.init))
        }
    }

    /// Asks for a consumer's deletion without waiting for the answer (a reader done with an
    /// ephemeral consumer; the server removes it after its inactivity threshold anyway).
    public func deleteConsumerLater(stream: String, name: String) {
        try? request("CONSUMER.DELETE.\(stream).\(name)", body: nil) { _ in }
    }

    /// Deletes a consumer; false if there was no such consumer.
    @discardableResult
    public func deleteConsumer(stream: String, name: String) async throws(NATSError) -> Bool {
        do {
            return try await request("CONSUMER.DELETE.\(stream).\(name)", body: nil)["success"]?.boolValue ?? false
        } catch .jetStream(let error) where error.errorCode == JetStreamAPIError.consumerNotFound {
            return false
        }
    }

    /// Asks a pull consumer for up to `batch` messages and calls `completion` (on the connection's
    /// thread) with those that came: all of them, or fewer once the consumer has no more
    /// (`noWait`) or `expires` has passed.
    public func fetch(
        stream: String, consumer: String, batch: Int, expires: Duration = .seconds(1), noWait: Bool = true,
        completion: @escaping @Sendable (Result<[StoredMessage], NATSError>) -> Void
    ) throws(NATSError) {
        let subject = "\(apiPrefix).CONSUMER.MSG.NEXT.\(stream).\(consumer)"
        let body: JSONValue = [
            "batch": .number(.int(Int64(batch))), "expires": .number(.int(expires.nanoseconds)),
            "no_wait": .bool(noWait),
        ]
        let collected = Mutex<[StoredMessage]>([])
        let connection = self.connection
        _ = try connection.sendRequest(
            subject, payload: body.serialized(), headers: nil, timeout: expires + timeout,
            handler: .stream { result in
                switch result {
                case .failure(.timedOut):
                    completion(.success(collected.withLock { $0 }))
                    return false
                case .failure(.noResponders(_, let server)):
                    completion(.failure(.jetStreamUnavailable(subject: subject, server: server)))
                    return false
                case .failure(let error):
                    completion(.failure(error))
                    return false
                case .success(let message):
                    switch message.status {
                    case nil:
                        guard let stored = Self.storedMessage(fromDelivery: message, stream: stream) else {
                            completion(
                                .failure(
                                    .invalidResponse(
                                        subject: subject, server: connection.serverName,
                                        detail: "a delivery without a $JS.ACK reply subject")))
                            return false
                        }
                        let count = collected.withLock { messages in
                            messages.append(stored)
                            return messages.count
                        }
                        guard count >= batch else { return true }
                    case 100?:
                        return true  // an idle heartbeat
                    case 404?, 408?:
                        break  // no (more) messages, or the request expired
                    case 503?:
                        completion(.failure(.jetStreamUnavailable(subject: subject, server: connection.serverName)))
                        return false
                    case let status?:
                        let reason = "\(status) \(message.headers.statusDescription ?? "")"
                        if status == 409 && collected.withLock({ !$0.isEmpty }) { break }
                        completion(
                            .failure(
                                .invalidResponse(
                                    subject: subject, server: connection.serverName,
                                    detail: "the fetch ended with status \(reason)")))
                        return false
                    }
                    completion(.success(collected.withLock { $0 }))
                    return false
                }
            })
    }

    /// Fetches up to `batch` messages; see ``fetch(stream:consumer:batch:expires:noWait:completion:)``.
    public func fetch(
        stream: String, consumer: String, batch: Int, expires: Duration = .seconds(1), noWait: Bool = true
    ) async throws(NATSError) -> [StoredMessage] {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<[StoredMessage], NATSError>) -> Void) throws(NATSError) in
            try fetch(
                stream: stream, consumer: consumer, batch: batch, expires: expires, noWait: noWait,
                completion: completion)
        }
    }

    /// Every message on `subject` (wildcards allowed) from sequence `from` on, oldest first, read
    /// through an ephemeral, in-memory, unacknowledged consumer in batches of `batch`: an ordered
    /// consumer, recreated from the last sequence seen if a delivery is ever skipped.
    public func replay(stream: String, subject: String, from: UInt64 = 1, batch: Int = 256) async throws(NATSError)
        -> [StoredMessage]
    {
        var messages: [StoredMessage] = []
        var next = from
        consumers: while true {
            var config = ConsumerConfig(filterSubject: subject, deliverPolicy: .byStartSequence(next))
            config.replicas = 1
            config.memoryStorage = true
            let consumer = try await createConsumer(stream: stream, config)
            var expected: UInt64 = 1
            var pending = consumer.pending
            while pending > 0 {
                let fetched = try await fetch(stream: stream, consumer: consumer.name, batch: batch)
                for message in fetched {
                    guard message.consumerSequence == expected else {
                        _ = try? await deleteConsumer(stream: stream, name: consumer.name)
                        continue consumers
                    }
                    expected += 1
                    messages.append(message)
                    next = message.sequence + 1
                }
                guard let last = fetched.last else { break }
                pending = last.pending ?? 0
            }
            _ = try? await deleteConsumer(stream: stream, name: consumer.name)
            return messages
        }
    }

    /// A consumer delivery: the original subject, headers and payload, and the reply subject
    /// `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`
    /// (with domain and account hash after `ACK` in the newer form).
    static func storedMessage(fromDelivery message: NATSMessage, stream: String) -> StoredMessage? {
        guard let reply = message.replyTo, reply.hasPrefix("$JS.ACK.") else { return nil }
        let tokens = reply.split(separator: ".", omittingEmptySubsequences: false)
        let offset = tokens.count == 9 ? 2 : tokens.count >= 11 ? 4 : -1
        guard offset > 0, let sequence = UInt64(tokens[offset + 3]), let consumerSequence = UInt64(tokens[offset + 4]),
            let pending = UInt64(tokens[offset + 6])
        else { return nil }
        var stored = StoredMessage(
            stream: stream, subject: message.subject, sequence: sequence, headers: message.headers,
            payload: message.payload)
        stored.pending = pending
        stored.consumerSequence = consumerSequence
        return stored
    }
}
