import Logs
import Synchronization

/// The sessions quarantined because their reactor's code crashed the server: at start, every session
/// named in a crash record (this process's crash folder, and with several instances every instance's
/// records stored with the sessions) is quarantined before any request can load it, and stays so until
/// an operator releases, or deletes it. Their action logs list the action each crash was running.
///
/// ```swift
/// let folder = CrashFolder(path: "data/crashes")
/// let crashes = CrashQuarantine(folder: folder, storage: storage, logger: logger, gauge: gauge)
/// crashes.quarantineAtStart()
/// crashes.records(of: "s1")   // what crashed it, newest last
/// ```
final class CrashQuarantine: Sendable {
    /// This process's crash folder; nil in memory-only mode (nothing survives a restart to quarantine).
    let folder: CrashFolder?
    let storage: (any StorageBackend)?
    let logger: Logger
    /// `reactor_sessions_quarantined`.
    let gauge: Gauge
    /// The records read from the crash folder, by session (those the storage keeps are asked for there).
    private let local = Mutex<[String: [CrashRecord]]>([:])

    init(folder: CrashFolder?, storage: (any StorageBackend)?, logger: Logger, gauge: Gauge) {
        self.folder = folder
        self.storage = storage
        self.logger = logger
        self.gauge = gauge
    }

    /// Quarantines every stored session a crash record names (a critical log line each), sharing this
    /// process's records with the other instances first when the storage keeps them for everyone.
    /// Records of sessions no longer stored are deleted.
    func quarantineAtStart() {
        guard let storage else { return }
        var found = folder?.records(logger: logger) ?? []
        if !found.isEmpty, storage.sharesCrashRecords {
            if storage.shareCrashRecords(found) {
                folder?.remove(found, logger: logger)
                found = []
            } else {
                logger.error(
                    "the crash records of this instance cannot be stored with the sessions now; they quarantine "
                        + "their sessions here, and are stored at the next start", ["records": .int(found.count)])
            }
        }
        let records = Dictionary(grouping: found + storage.sharedCrashRecords(of: nil), by: \.session).mapValues(
            Self.unique)
        var kept: [String: [CrashRecord]] = [:]
        for (id, crashes) in records.sorted(by: { $0.key < $1.key }) {
            storage.refreshStoredVersion(of: id)
            guard let info = storage.storedSession(id) else {
                logger.notice("crash records of a session no longer stored are deleted", ["session": .string(id)])
                forget(id, crashes)
                continue
            }
            kept[id] = crashes.filter { found.contains($0) }
            let reason = crashes.quarantineReason(id: id)
            if info.unavailable != reason { storage.quarantine(id, reason: reason) }
            let latest = crashes.last!
            logger.critical(
                "a session is quarantined: its reactor crashed the server; release, fork or delete it",
                [
                    "session": .string(id), "reactor": .string(latest.reactor), "crashed_in": .string(latest.what),
                    "signal": .string(latest.signal), "at": .string(latest.when), "crashes": .int(crashes.count),
                    "last_good_version": .int(Int(crashes.lastGoodVersion(stored: info.version))),
                    "record": .string(latest.origin),
                ])
        }
        local.withLock { $0 = kept.filter { !$0.value.isEmpty } }
        refreshGauge()
    }

    /// What crashed session `id`, oldest first; empty when no crash quarantines it.
    func records(of id: String) -> [CrashRecord] {
        let own = local.withLock { $0[id] ?? [] }
        return Self.unique(own + (storage?.sharedCrashRecords(of: id) ?? []))
    }

    /// Deletes the records of session `id` (released, or deleted): its files and the stored ones.
    func forget(_ id: String) {
        forget(id, records(of: id))
        refreshGauge()
    }

    private func forget(_ id: String, _ records: [CrashRecord]) {
        local.withLock { _ = $0.removeValue(forKey: id) }
        folder?.remove(records, logger: logger)
        storage?.removeSharedCrashRecords(of: id)
    }

    /// Counts the sessions a crash quarantines (for `/metrics`; called at start, on changes and by upkeep).
    func refreshGauge() {
        let ids = Set(local.withLock { Array($0.keys) } + (storage?.sharedCrashRecords(of: nil).map(\.session) ?? []))
        gauge.set(ids.count)
    }

    /// One record per crash (the same crash may come from the folder and from the storage), oldest first.
    static func unique(_ records: [CrashRecord]) -> [CrashRecord] {
        var seen = Set<String>()
        return records.sorted { $0.at < $1.at }.filter { seen.insert("\($0.session) \($0.at) \($0.phase)").inserted }
    }
}
