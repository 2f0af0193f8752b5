import Dispatch
import NATS

// Reading a session's subject back: its load, and past versions for time travel.
extension NATSStorage {
    /// Every message on `subject` from sequence `from` on, oldest first, through an ephemeral pull
    /// consumer (one replica, in memory, no acknowledgements) read in batches; a gap in the
    /// consumer's sequence (a lost delivery) fails the read, which is then tried again by the caller.
    func readSubject(_ subject: String, from: UInt64, stream: String? = nil) -> Result<[StoredMessage], NATSError> {
        var config = ConsumerConfig(filterSubject: subject, deliverPolicy: from <= 1 ? .all : .byStartSequence(from))
        config.replicas = 1
        config.memoryStorage = true
        let jetStream = self.jetStream
        let stream = stream ?? names.recordsStream
        let consumer: ConsumerInfo
        switch waitFor(
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
            switch waitFor(
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

    /// Every record of session `id` on its subject, oldest first; a resident session's records in
    /// flight are waited for (bounded), so what it has shown is there.
    func records(of id: String) throws(StorageReadError) -> [StoredRecord] {
        if let log = logs.withLock({ $0[id] }) {
            let done = DispatchSemaphore(value: 0)
            watermark.whenDurable(log.lastPosition) { done.signal() }
            _ = done.wait(timeout: .now() + options.requestTimeout.timeInterval)
        }
        let messages: [StoredMessage]
        switch readSubject(names.records(id), from: 1) {
        case .success(let found): messages = found
        case .failure(let error): throw StorageReadError(reason: "its records cannot be read from JetStream: \(error)")
        }
        var assembler = RecordAssembler()
        var records: [StoredRecord] = []
        for message in messages {
            switch assembler.add(message.payload, sequence: message.sequence) {
            case .success(let found): records += found
            case .failure(let damage): throw StorageReadError(reason: "its records cannot be read back: \(damage)")
            }
        }
        return records
    }

    /// Reads session `id`'s subject back without claiming it or writing a fence: what its owner (if any)
    /// has stored so far.
    func peek(_ id: String) -> Result<StoredHistory, StorageReadError> {
        guard let meta = catalog.meta(id) else {
            return .failure(StorageReadError(reason: "it is no longer stored"))
        }
        if let reason = catalog.quarantineReason(id, meta) {
            return .failure(StorageReadError(reason: reason))
        }
        var replay = RecordReplay(limits: options.actionLogLimits)
        switch readSubject(names.records(id), from: 1) {
        case .failure(let error):
            return .failure(StorageReadError(reason: "its records cannot be read from JetStream: \(error)"))
        case .success(let messages):
            for message in messages {
                if case .failure(let damage) = replay.add(message) {
                    replay = replay.damaged(damage)
                    break
                }
            }
        }
        return replay.history().mapError { StorageReadError(reason: $0.reason) }
    }

    func history(of id: String, upTo version: UInt64) throws(StorageReadError) -> StoredVersionHistory? {
        guard contains(id) else { return nil }
        return RecordReplay.versionHistory(try records(of: id), upTo: version)
    }

    func oldestRetainedVersion(of id: String) -> UInt64? {
        guard contains(id), let records = try? records(of: id) else { return nil }
        return records.filter { $0.kind == .snapshot }.map(\.number).min()
    }
}

// Waiting for JetStream: the storage protocol's calls that return results.
extension NATSStorage {
    /// Waits for a JetStream call of this backend (its request timeout, and a margin); `what` names
    /// the call in a timeout's error.
    func waitFor<T: Sendable>(
        _ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: options.requestTimeout, start)
    }
}
