import Dispatch
import NATS

// A quarantined session on the cluster: lifting the quarantine, and its action log read without claiming it.
extension NATSStorage {
    func liftQuarantine(_ id: String) {
        crashes.beginRelease(id)
        catalog.clearMarks(id)
        switch catalog.update(id, { $0.unavailable = nil }) {
        case .success: break
        case .failure(let error):
            logger.error(
                "a session's quarantine cannot be lifted in the sessions bucket; other instances still refuse it",
                ["session": .string(id), "error": .string(error.description)])
        }
    }

    /// Reads the session's subject back (no claim, no fence: the owner, if any, goes on undisturbed).
    func storedActionLog(of id: String) throws(StorageReadError) -> [ActionLogEntry]? {
        guard contains(id) else { return nil }
        let messages: [StoredMessage]
        switch reader.messages(on: names.records(id), from: 1) {
        case .success(let found): messages = found
        case .failure(let error): throw StorageReadError(reason: "its records cannot be read from JetStream: \(error)")
        }
        var replay = RecordReplay(limits: options.actionLogLimits)
        for message in messages {
            if case .failure(let damage) = replay.add(message) {
                throw StorageReadError(reason: "its records cannot be read back: \(damage)")
            }
        }
        switch replay.history() {
        case .success(let history): return history.actions
        case .failure(let failure): throw StorageReadError(reason: failure.reason)
        }
    }
}
