import Dispatch
import JSONCodec
import NATS
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// Crash records on the cluster: the crashes bucket (one key per crash, `<session>.<unix nanoseconds>`),
// which the fatal-signal handler writes to itself over a connection of its own, an instance writes its
// crash folder's records to when it starts, and every instance mirrors; and what an instance that takes a
// session over from a dead one checks before it replays anything.
extension NATSStorage {
    var sharesCrashRecords: Bool { true }

    func shareCrashRecords(_ records: [CrashRecord]) -> Bool {
        let bucket = KeyValue(jetStream: jetStream, bucket: names.crashesBucket)
        for record in records {
            let key = "\(record.session).\(record.at)"
            let value = record.json
            switch waitFor(
                "a put of crash record \(key)",
                { completion in try bucket.put(key, value: value, completion: completion) })
            {
            case .success:
                crashRecords.put(key, record)
            case .failure(let error):
                logger.error(
                    "a crash record cannot be stored in JetStream",
                    ["key": .string(key), "error": .string(error.description)])
                return false
            }
        }
        return true
    }

    func sharedCrashRecords(of id: String?) -> [CrashRecord] {
        crashRecords.records(of: id)
    }

    func removeSharedCrashRecords(of id: String) {
        _ = releasing.withLock { $0.remove(id) }
        let bucket = KeyValue(jetStream: jetStream, bucket: names.crashesBucket)
        for key in crashRecords.remove(of: id) {
            let deleted = waitFor("the deletion of crash record \(key)") { completion in
                try bucket.delete(key, completion: completion)
            }
            if case .failure(let error) = deleted {
                logger.error(
                    "a crash record cannot be deleted from JetStream; other instances still see its session "
                        + "quarantined",
                    ["key": .string(key), "error": .string(error.description)])
            }
        }
    }

    func refreshStoredVersion(of id: String) {
        guard let records = try? records(of: id) else { return }
        let newest = records.filter { $0.kind == .snapshot || $0.kind == .mutation || $0.kind == .forced }.map(\.number)
            .max()
        if let newest { catalog.raiseVersion(of: id, to: newest) }
    }

    /// Why session `id` is quarantined by crash records, unless an operator is releasing it here.
    func crashReason(_ id: String) -> String? {
        guard !releasing.withLock({ $0.contains(id) }) else { return nil }
        let records = crashRecords.records(of: id)
        return records.isEmpty ? nil : records.quarantineReason(id: id)
    }

    /// Why the session must not be loaded now that this instance took it from `owner`, which is gone
    /// without handing it off; nil when nothing says it died of it. The crashes bucket is read from its
    /// leader (the mirror may lag a record the dead owner's handler stored an instant ago); then the
    /// owner's claim: it said it was loading the session (replaying its history) when it went.
    func crashedOwner(_ id: String, _ owner: OwnershipClaim) -> String? {
        switch reader.messages(on: names.crashes(id), from: 1, stream: names.crashesStream) {
        case .success(let messages):
            for message in messages { crashRecords.apply(message, prefix: names.crashSubjectPrefix) }
        case .failure(let error):
            logger.warning(
                "the crash records of a session taken over cannot be read; the mirror's are used",
                [
                    "session": .string(id), "error": .string(error.description),
                ])
        }
        if let reason = crashReason(id) { return reason }
        guard owner.loading else { return nil }
        return
            "instance \(owner.instance) died while it was loading this session (replaying its history), and no crash "
            + "record of it reached the cluster: it is quarantined so that no instance replays it into the same fault; "
            + "POST /admin/sessions/\(id)/release to load it again (a crash then quarantines it with its record), "
            + "or fork it at an earlier version"
    }

    /// Says in the session's claim that its load succeeded (the claim said it was loading until now), and
    /// waits for it (bounded): until then, this instance dying, even by `kill -9`, would leave the session
    /// quarantined as one it died loading.
    func markLoaded(_ log: NATSSessionLog) {
        let revision = log.state.withLock { $0.claimRevision }
        switch claims.renew(log.id, revision: revision) {
        case .success(let next):
            log.state.withLock { if $0.claimRevision == revision { $0.claimRevision = next } }
        case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
            // Written since (renewed, put back by a load that lost to this one, or taken over): it no longer says
            // loading. When it is this instance's, its revision is what giving it up and renewing it expect now.
            if case .success(let found?) = claims.read(log.id), found.claim == claims.own {
                log.state.withLock { if $0.claimRevision == revision { $0.claimRevision = found.revision } }
            }
        case .failure(let error):
            logger.warning(
                "a loaded session's claim still says it is loading; if this instance dies before it is renewed, "
                    + "the next one quarantines the session",
                ["session": .string(log.id), "error": .string(error.description)])
        }
    }

    /// Starts mirroring the crashes bucket and waits until it has caught up, so that the sessions it
    /// names are quarantined before this instance serves anything.
    func followCrashes(waiting wait: Duration) throws(NATSStorageError) {
        crashesWatcher.start()
        let started = ContinuousClock.now
        while !crashesWatcher.hasCaughtUp {
            if ContinuousClock.now - started > wait {
                throw NATSStorageError(
                    description: "the crashes bucket \(names.crashesBucket) could not be read from JetStream")
            }
            usleep(5_000)
        }
    }

    /// Where the fatal-signal handler sends crash records: the servers (resolved now: the handler cannot
    /// resolve names), the `CONNECT` with this instance's credentials, and the bucket's subject prefix.
    func crashRecordTarget() -> (servers: [ResolvedAddress], connectLine: String, subjectPrefix: String) {
        let servers = options.servers.flatMap { server in
            (try? Posix.resolve(host: server.host, port: server.port)) ?? []
        }
        let first = options.servers.first
        var fields: [(String, JSONValue)] = [
            ("verbose", false), ("pedantic", false), ("tls_required", false),
            ("name", .string("reactor-server \(options.instance) crash record")),
            ("lang", "c"), ("version", "1.0.0"), ("protocol", 1),
        ]
        if let user = options.user ?? first?.user {
            fields.append(("user", .string(user)))
            fields.append(("pass", .string(options.password ?? first?.password ?? "")))
        } else if let token = options.token ?? first?.token {
            fields.append(("auth_token", .string(token)))
        }
        let connect = "CONNECT " + JSONValue.object(JSONObject(fields)).serializedString() + "\r\n"
        return (servers, connect, names.crashSubjectPrefix)
    }
}

/// The crashes bucket as this instance last heard it: each crash record by its key.
final class CrashMirror: Sendable {
    private let records = Mutex<[String: CrashRecord]>([:])

    /// Applies one message of the bucket's stream (a put, or a deletion or purge of its key).
    func apply(_ message: StoredMessage, prefix: String) {
        guard message.subject.hasPrefix(prefix) else { return }
        let key = String(message.subject.dropFirst(prefix.count))
        switch message.headers["KV-Operation"] {
        case "DEL"?, "PURGE"?:
            _ = records.withLock { $0.removeValue(forKey: key) }
        default:
            guard let record = CrashRecord(json: message.payload, origin: key) else { return }
            records.withLock { $0[key] = record }
        }
    }

    /// Notes a record this instance stored itself.
    func put(_ key: String, _ record: CrashRecord) {
        var record = record
        record.origin = key
        records.withLock { $0[key] = record }
    }

    /// The records of session `id` (nil: every session), oldest first.
    func records(of id: String?) -> [CrashRecord] {
        records.withLock { records in records.values.filter { id == nil || $0.session == id } }.sorted { $0.at < $1.at }
    }

    /// Forgets the records of session `id`; their keys.
    func remove(of id: String) -> [String] {
        records.withLock { records in
            let keys = records.filter { $0.value.session == id }.map(\.key)
            for key in keys { records.removeValue(forKey: key) }
            return keys
        }
    }
}
