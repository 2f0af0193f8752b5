import NATS

/// Reads a session's subject (or a crash record's) back from JetStream: for a load, a peek, time travel and the
/// crash records of a session taken over. Holds no state of its own; a copy is as good as the original.
struct NATSSubjectReader: Sendable {
    let jetStream: JetStream
    /// Names the server in a read's errors.
    let connection: NATSConnection
    /// The stream read when none is named (the records stream).
    let stream: String
    /// How long one JetStream request may take.
    let timeout: Duration

    /// Every message on `subject` from sequence `from` on, oldest first, through an ephemeral pull
    /// consumer (one replica, in memory, no acknowledgements) read in batches; a gap in the
    /// consumer's sequence (a lost delivery) fails the read, which is then tried again by the caller.
    func messages(on subject: String, from: UInt64, stream: String? = nil) -> Result<[StoredMessage], NATSError> {
        var config = ConsumerConfig(filterSubject: subject, deliverPolicy: from <= 1 ? .all : .byStartSequence(from))
        config.replicas = 1
        config.memoryStorage = true
        let jetStream = self.jetStream
        let stream = stream ?? self.stream
        let consumer: ConsumerInfo
        switch wait(
            "the creation of a consumer of \(subject) on \(stream)",
            { completion in try jetStream.createConsumer(stream: stream, config, completion: completion) })
        {
        case .success(let info): consumer = info
        case .failure(let error): return .failure(error)
        }
        defer { jetStream.deleteConsumerLater(stream: stream, name: consumer.name) }
        var messages: [StoredMessage] = []
        var pending = consumer.pending
        var empty = 0
        while pending > 0 {
            let batch = Int(min(pending, 1024))
            let fetched: [StoredMessage]
            switch wait(
                "a fetch of \(batch) records of \(subject) from \(stream)",
                { completion in
                    try jetStream.fetch(
                        stream: stream, consumer: consumer.name, batch: batch, expires: .seconds(1), noWait: true,
                        completion: completion)
                })
            {
            case .success(let found): fetched = found
            case .failure(let error): return .failure(error)
            }
            guard let last = fetched.last else {
                empty += 1
                if empty > 3 {
                    return .failure(
                        .invalidResponse(
                            subject: subject, server: connection.serverName,
                            detail: "the stream stopped delivering with \(pending) messages to go"))
                }
                continue
            }
            for message in fetched {
                guard message.consumerSequence == UInt64(messages.count + 1) else {
                    return .failure(
                        .invalidResponse(
                            subject: subject, server: connection.serverName, detail: "a delivery was skipped"))
                }
                messages.append(message)
            }
            pending = last.pending ?? 0
        }
        return .success(messages)
    }

    /// Waits for one JetStream call (the request timeout and a margin); `what` names it in a timeout's error.
    private func wait<T: Sendable>(
        _ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: timeout, start)
    }
}
