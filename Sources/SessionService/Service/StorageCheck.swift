import JSONCodec

/// Whether stored sessions load with the reactors a server hosts, read without serving them (`reactor-server
/// verify`, and the check a server makes at start): per reactor, how many load as stored, how many only after a
/// migration, and how many would not load, with the first reasons.
///
/// ```swift
/// let check = StorageCheck.run(storage: storage, catalog: catalog, limit: nil)
/// print(check.report(storageName: "the journal in data"))
/// exit(check.failed == 0 ? 0 : 1)
/// ```
struct StorageCheck: Sendable {
    /// What one reactor's sessions came to.
    struct Tally: Sendable {
        var asStored = 0
        var migrated = 0
        var failed = 0
        /// The first few migrated sessions, each with what was made of it.
        var migrations: [(id: String, what: String)] = []
        /// The first few sessions that would not load, each with why.
        var failures: [(id: String, reason: String)] = []
    }

    /// How many examples of each kind a reactor's tally keeps.
    static let examples = 5

    var tallies: [String: Tally] = [:]
    /// The storage version each hosted reactor reads and writes, by name.
    var storageVersions: [String: Int] = [:]
    /// Sessions stored, and how many of them were checked (fewer when the check was a sample).
    var stored = 0
    var checked = 0

    var failed: Int { tallies.values.reduce(0) { $0 + $1.failed } }
    var migrated: Int { tallies.values.reduce(0) { $0 + $1.migrated } }
    var asStored: Int { tallies.values.reduce(0) { $0 + $1.asStored } }

    /// Reads up to `limit` stored sessions (every one when nil) and checks each with its reactor; `failed`
    /// is called for each that would not load (with its reactor's name). Without `reducing`, stored records are
    /// decoded and migrated but `reduce` does not run (the check a serving server makes: a `reduce` that traps
    /// on old data must not take the process down before anyone asked for that session).
    static func run(
        storage: any StorageBackend, catalog: ReactorCatalog, limit: Int?, reducing: Bool = true,
        failed: (_ reactor: String, _ id: String) -> Void = { _, _ in }
    ) -> StorageCheck {
        var check = StorageCheck()
        for definition in catalog.definitions { check.storageVersions[definition.name] = definition.storageVersion }
        let sessions = storage.storedSessions().sorted { $0.id < $1.id }
        check.stored = sessions.count
        for info in sessions.prefix(limit ?? .max) {
            // Deleted since it was listed (a check beside a serving server): not a session that would not load.
            guard let outcome = self.outcome(of: info, storage: storage, catalog: catalog, reducing: reducing) else {
                check.stored -= 1
                continue
            }
            check.checked += 1
            check.note(info, outcome)
            if case .failure = outcome { failed(info.reactor, info.id) }
        }
        return check
    }

    /// Whether one stored session loads, and what had to be made of it; nil when it is no longer stored.
    static func outcome(
        of info: StoredSessionInfo, storage: any StorageBackend, catalog: ReactorCatalog, reducing: Bool
    ) -> Result<LoadReport, RestoreError>? {
        if let reason = info.unavailable { return .failure(RestoreError(reason: reason)) }
        guard let definition = catalog.definition(named: info.reactor) else {
            return .failure(
                RestoreError(reason: "its reactor \(JSONWriter.quoted(info.reactor)) is not hosted by this server"))
        }
        switch storage.peek(info.id) {
        case .failure(let error) where error.isGone: return nil
        case .failure(let error): return .failure(RestoreError(reason: error.reason))
        case .success(let history): return definition.check(info.id, history, reducing)
        }
    }

    mutating func note(_ info: StoredSessionInfo, _ outcome: Result<LoadReport, RestoreError>) {
        var tally = tallies[info.reactor] ?? Tally()
        switch outcome {
        case .success(let report) where report.isMigrated:
            tally.migrated += 1
            if tally.migrations.count < Self.examples { tally.migrations.append((info.id, report.summary)) }
        case .success:
            tally.asStored += 1
        case .failure(let error):
            tally.failed += 1
            if tally.failures.count < Self.examples { tally.failures.append((info.id, error.reason)) }
        }
        tallies[info.reactor] = tally
    }

    /// The listing `verify` prints: a line per reactor, then its examples indented, then the totals.
    func report(storageName: String) -> String {
        var lines: [String] = []
        let sample = checked < stored ? " (a sample of \(checked) of \(stored))" : ""
        lines.append("checked \(checked) stored sessions in \(storageName)\(sample)")
        for (name, tally) in tallies.sorted(by: { $0.key < $1.key }) {
            let version = storageVersions[name].map { "storage version \($0)" } ?? "not hosted by this server"
            lines.append(
                "\(name) (\(version)): \(tally.asStored) load as stored, \(tally.migrated) load after migration, "
                    + "\(tally.failed) would not load")
            for example in tally.migrations { lines.append("  migrated \(example.id): \(example.what)") }
            if tally.migrated > tally.migrations.count {
                lines.append("  … and \(tally.migrated - tally.migrations.count) more migrated")
            }
            for example in tally.failures { lines.append("  would not load \(example.id): \(example.reason)") }
            if tally.failed > tally.failures.count {
                lines.append("  … and \(tally.failed - tally.failures.count) more that would not load")
            }
        }
        lines.append("total: \(asStored) load as stored, \(migrated) load after migration, \(failed) would not load")
        return lines.joined(separator: "\n") + "\n"
    }
}
