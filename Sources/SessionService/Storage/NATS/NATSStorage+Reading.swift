import Dispatch
import NATS

// Reading a session's subject back: its load, and past versions for time travel.
extension NATSStorage {
    /// Every record of session `id` on its subject, oldest first; a resident session's records in
    /// flight are waited for (bounded), so what it has shown is there.
    func records(of id: String) throws(StorageReadError) -> [StoredRecord] {
        if let log = logs.withLock({ $0[id] }) {
            let done = DispatchSemaphore(value: 0)
            watermark.whenDurable(log.lastPosition) { done.signal() }
            _ = done.wait(timeout: .now() + options.requestTimeout.timeInterval)
        }
        let messages: [StoredMessage]
        switch reader.messages(on: names.records(id), from: 1) {
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
        guard let meta = catalog.meta(id) else { return .failure(.gone) }
        if let reason = catalog.quarantineReason(id, meta) {
            return .failure(StorageReadError(reason: reason))
        }
        var replay = RecordReplay(limits: options.actionLogLimits)
        switch reader.messages(on: names.records(id), from: 1) {
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
