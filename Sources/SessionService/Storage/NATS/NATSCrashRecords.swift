import JSONCodec
import Logs
import NATS
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Crash records on the cluster: the crashes bucket (one key per crash, `<session>.<unix nanoseconds>`), which the
/// fatal-signal handler writes to itself over a connection of its own, an instance writes its crash folder's records
/// to when it starts, and every instance mirrors; what an instance that takes a session over from a dead one checks
/// before it replays anything; and the sessions an operator is releasing here, whose records refuse no load.
///
/// ```swift
/// if let reason = crashes.reason("s1") { return .unavailable(reason) }
/// ```
final class NATSCrashRecords: Sendable {
    let bucket: KeyValue
    /// Every crash record of the cluster, as the bucket says (mirrored by ``watcher``).
    private let mirror = CrashMirror()
    private let watcher: OrderedConsumer
    /// Sessions an operator is releasing here: their crash records do not refuse the load that tries.
    private let releasing = Mutex<Set<String>>([])
    private let names: NATSStorageNames
    private let options: NATSStorage.Options
    private let reader: NATSSubjectReader
    private let logger: Logger

    init(
        jetStream: JetStream, names: NATSStorageNames, options: NATSStorage.Options, reader: NATSSubjectReader,
        logger: Logger
    ) {
        self.names = names
        self.options = options
        self.reader = reader
        self.logger = logger
        bucket = KeyValue(jetStream: jetStream, bucket: names.crashesBucket)
        let mirror = self.mirror
        let prefix = names.crashSubjectPrefix
        watcher = bucket.watcher { mirror.apply($0, prefix: prefix) }
    }

    /// Starts mirroring the crashes bucket and waits until it has caught up, so that the sessions it
    /// names are quarantined before this instance serves anything.
    func follow(waiting wait: Duration) throws(NATSStorageError) {
        guard watcher.startAndWaitUntilCaughtUp(within: wait) else {
            throw NATSStorageError(
                description: "the crashes bucket \(names.crashesBucket) could not be read from JetStream")
        }
    }

    /// Stops the watcher (at shutdown, or when start-up fails).
    func stop() { watcher.stop() }

    // MARK: Records

    /// Stores `records` in the bucket, waiting for each; false at the first that cannot be stored.
    func share(_ records: [CrashRecord]) -> Bool {
        let bucket = self.bucket
        for record in records {
            let key = "\(record.session).\(record.at)"
            let value = record.json
            switch wait("a put of crash record \(key)", { try bucket.put(key, value: value, completion: $0) }) {
            case .success:
                mirror.put(key, record)
            case .failure(let error):
                logger.error(
                    "a crash record cannot be stored in JetStream",
                    ["key": .string(key), "error": .string(error.description)])
                return false
            }
        }
        return true
    }

    /// The records of session `id` (nil: every session), oldest first.
    func records(of id: String?) -> [CrashRecord] { mirror.records(of: id) }

    /// Deletes session `id`'s records from the bucket (an operator released or deleted it); its release here ends.
    func remove(of id: String) {
        endRelease(id)
        let bucket = self.bucket
        for key in mirror.remove(of: id) {
            let deleted = wait("the deletion of crash record \(key)") { try bucket.delete(key, completion: $0) }
            if case .failure(let error) = deleted {
                logger.error(
                    "a crash record cannot be deleted from JetStream; other instances still see its session "
                        + "quarantined",
                    ["key": .string(key), "error": .string(error.description)])
            }
        }
    }

    // MARK: Releasing

    /// An operator releases session `id` here: its records refuse no load until ``endRelease(_:)``.
    func beginRelease(_ id: String) {
        _ = releasing.withLock { $0.insert(id) }
    }

    /// Session `id`'s release here ends (it is quarantined again, or its records are gone).
    func endRelease(_ id: String) {
        _ = releasing.withLock { $0.remove(id) }
    }

    /// Whether an operator is releasing session `id` here.
    func isReleasing(_ id: String) -> Bool { releasing.withLock { $0.contains(id) } }

    // MARK: Quarantine

    /// Why session `id` is quarantined by crash records, unless an operator is releasing it here.
    func reason(_ id: String) -> String? {
        guard !isReleasing(id) else { return nil }
        let records = mirror.records(of: id)
        return records.isEmpty ? nil : records.quarantineReason(id: id)
    }

    /// Why the session must not be loaded now that this instance took it from `owner`, which is gone
    /// without handing it off; nil when nothing says it died of it. The crashes bucket is read from its
    /// leader (the mirror may lag a record the dead owner's handler stored an instant ago); then the
    /// owner's claim: it said it was loading the session (replaying its history) when it went.
    func crashedOwner(_ id: String, _ owner: OwnershipClaim) -> String? {
        switch reader.messages(on: names.crashes(id), from: 1, stream: names.crashesStream) {
        case .success(let messages):
            for message in messages { mirror.apply(message, prefix: names.crashSubjectPrefix) }
        case .failure(let error):
            logger.warning(
                "the crash records of a session taken over cannot be read; the mirror's are used",
                [
                    "session": .string(id), "error": .string(error.description),
                ])
        }
        if let reason = reason(id) { return reason }
        guard owner.loading else { return nil }
        return
            "instance \(owner.instance) died while it was loading this session (replaying its history), and no crash "
            + "record of it reached the cluster: it is quarantined so that no instance replays it into the same fault; "
            + "POST /admin/sessions/\(id)/release to load it again (a crash then quarantines it with its record), "
            + "or fork it at an earlier version"
    }

    // MARK: The fatal-signal handler

    /// Where the fatal-signal handler sends crash records: the servers (resolved now: the handler cannot
    /// resolve names), the `CONNECT` with this instance's credentials, and the bucket's subject prefix.
    func target() -> (servers: [ResolvedAddress], connectLine: String, subjectPrefix: String) {
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

    /// Waits for one JetStream call (the request timeout and a margin); `what` names it in a timeout's error.
    private func wait<T: Sendable>(
        _ what: @autoclosure () -> String, _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws -> Void
    ) -> Result<T, NATSError> {
        Blocking.call(what(), timeout: options.requestTimeout, start)
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
