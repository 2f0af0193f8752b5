import Dispatch
import Logs
import NATS
import Synchronization
import Tokens

#if canImport(Glibc)
    import Glibc
#endif

/// The storage backend on a NATS JetStream cluster, shared by every instance that names the same
/// servers and prefix. What lies where (see ``NATSStorageNames``):
///
/// - the stream `<prefix>-records`, one subject per session (`<prefix>.records.<id>`): every record of
///   the session in order (snapshots, mutations, forced states, accepted actions, completions,
///   action-log checkpoints, fences), in batches of ``RecordFrame``s, each publish carrying
///   `Nats-Expected-Last-Subject-Sequence` (the single-writer check) and a batch id (safe retries);
/// - the bucket `<prefix>-sessions`: each session's metadata (`SessionMeta`: reactor, version as of
///   its last release, access token hash, quarantine), mirrored in every instance's memory;
/// - the bucket `<prefix>-claims`: which instance runs each session (``OwnershipClaim``);
/// - the bucket `<prefix>-instances`: one heartbeat per live instance, gone `storage.nats.claimTTLSeconds`
///   after its last renewal (the bucket's age limit): a claim whose instance has none is a dead one.
///
/// Appends never wait: each session publishes one batch at a time and gathers what is appended
/// meanwhile into the next, and the watermark (``DurabilityWatermark``) moves as acknowledgements
/// arrive on the connection's thread. Loading and creating sessions, deletions and tokens wait for
/// JetStream (bounded by `storage.nats.timeoutSeconds`), as the storage protocol's calls return
/// their results.
final class NATSStorage: StorageBackend {
    /// Tunables, from the `storage.nats.*` settings.
    struct Options: Sendable {
        var servers: [NATSServerAddress]
        var user: String?
        var password: String?
        var token: String?
        /// Stream and bucket replicas: 3 on a cluster; more than the servers hold is clamped at start.
        var replicas = 3
        /// How long a dead instance's claims hold its sessions.
        var claimTTL: Duration = .seconds(5)
        /// This instance's name: its heartbeat key, and who owns what it claims.
        var instance: String
        /// The first part of every stream, bucket and subject name.
        var prefix = "reactor"
        /// How long one JetStream request may take.
        var requestTimeout: Duration = .seconds(5)
        /// How long to wait at start for JetStream; nil: as long as it takes.
        var startTimeout: Duration?
        /// What each session's retained action log may hold (as the file journal keeps it).
        var actionLogLimits = ActionLogLimits()
        /// Messages on a resident session's subject after which upkeep asks it for a checkpoint and
        /// removes what came before.
        var trimAfterMessages = 2048
        /// Reads what is stored and never writes (`reactor-server verify`, beside running instances): no
        /// stream or bucket is created, no heartbeat put, nothing claimed, no hand-off served.
        var readOnly = false

        init(servers: [NATSServerAddress], instance: String) {
            self.servers = servers
            self.instance = instance
        }
    }

    let options: Options
    let names: NATSStorageNames
    let logger: Logger
    let connection: NATSConnection
    let jetStream: JetStream
    /// The `Nats-Msg-Id`s of this process's publishes.
    let messageIDs: NATSMessageIDs
    let watermark = DurabilityWatermark()
    let lease: OwnershipLease
    let metrics = NATSStorageMetrics()
    /// Every session stored, as the sessions bucket says, and the quarantine marks.
    let catalog: NATSSessionCatalog
    /// Logs of the sessions this process runs (and of those it released, while their last records go out).
    let logs = Mutex<[String: NATSSessionLog]>([:])
    /// Deleted sessions whose records are still to be purged.
    let erasures = Mutex<Set<String>>([])
    /// Sessions in memory, told when another instance took one over.
    let resident = Mutex<(any ResidentSessions)?>(nil)
    /// The largest message the servers take, less room for headers.
    let maxMessageBytes = Atomic<Int>(1 << 20)
    /// Retries and timers.
    let queue = DispatchQueue(label: "reactor.storage.nats")
    /// Who runs each session, and which instances are alive.
    let claims: NATSClaims
    /// Reads sessions' subjects back.
    let reader: NATSSubjectReader
    /// Claims, reads back and fences the sessions this instance loads.
    let loader: NATSSessionLoader
    /// Every crash record of the cluster, and the sessions an operator is releasing here.
    let crashes: NATSCrashRecords
    let closed = Atomic<Bool>(false)
    /// Each session's soonest timer, written to its entry in the sessions bucket.
    let timers: NATSTimerWrites

    /// Connects, waits for JetStream (logging while it is not ready), creates the stream and buckets
    /// (idempotently), renews this instance's heartbeat and mirrors the sessions bucket.
    init(options: Options, logger: Logger) throws(NATSStorageError) {
        self.options = options
        self.logger = logger
        names = try NATSStorageNames(prefix: options.prefix)
        let incarnation = OrderedConsumer.randomToken()
        messageIDs = NATSMessageIDs(incarnation: incarnation)
        var natsOptions = NATSOptions(servers: options.servers)
        natsOptions.user = options.user
        natsOptions.password = options.password
        natsOptions.token = options.token
        natsOptions.name = "reactor-server \(options.instance)"
        natsOptions.requestTimeout = options.requestTimeout
        natsOptions.maxReconnectWait = .seconds(1)
        natsOptions.logger = logger.labeled("nats")
        connection = NATSConnection(options: natsOptions)
        jetStream = JetStream(connection: connection, timeout: options.requestTimeout)
        catalog = NATSSessionCatalog(jetStream: jetStream, names: names, timeout: options.requestTimeout)
        claims = NATSClaims(
            jetStream: jetStream, names: names,
            own: OwnershipClaim(instance: options.instance, incarnation: incarnation),
            timeout: options.requestTimeout)
        reader = NATSSubjectReader(
            jetStream: jetStream, connection: connection, stream: names.recordsStream, timeout: options.requestTimeout)
        loader = NATSSessionLoader(
            claims: claims, reader: reader, messageIDs: messageIDs, names: names, options: options, metrics: metrics,
            logger: logger)
        lease = OwnershipLease(ttl: options.claimTTL)
        let (watermark, metrics) = (self.watermark, self.metrics)
        timers = NATSTimerWrites(catalog: catalog, claims: claims, watermark: watermark, logger: logger) {
            positions, id, reason in
            Self.lost(
                positions, shown: true, id: id, reason: reason, watermark: watermark, metrics: metrics, logger: logger)
        }
        crashes = NATSCrashRecords(
            jetStream: jetStream, names: names, options: options, reader: reader, logger: logger)
        connection.start()
        do {
            try setUp()
        } catch {
            catalog.stop()
            claims.watcher.stop()
            crashes.stop()
            connection.close()
            throw error
        }
    }

    deinit {
        close()
    }

    // MARK: Availability

    var unavailableReason: String? {
        if closed.load(ordering: .relaxed) { return "the storage is closed" }
        guard let reason = lease.unavailableReason else { return nil }
        if case .connected = connection.status { return reason }
        // Said first, with the servers: what an operator reading /healthz needs to look at.
        let servers = options.servers.map(\.description).joined(separator: ",")
        return "JetStream cannot be reached: no connection to \(servers) (\(connection.status)); \(reason)"
    }

    /// Loading a session claims it, reads its subject and writes a fence: JetStream round trips.
    var waitsOnNetwork: Bool { true }

    // MARK: Durability

    var appendedPosition: UInt64 { watermark.appendedPosition }

    func isDurable(_ position: UInt64) -> Bool { watermark.isDurable(position) }

    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        watermark.whenDurable(position, wake)
    }

    /// Each session's publishes are acknowledged by themselves: output showing one waits for its records only.
    func isDurableExactly(_ position: UInt64) -> Bool { watermark.isDurableExactly(position) }

    func whenDurableExactly(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        watermark.whenDurableExactly(position, wake)
    }

    /// An owner's records fenced off by the instance that took its session over are lost.
    var losesPositions: Bool { true }

    func lossReason(_ position: UInt64) -> String? { watermark.lossReason(position) }

    /// A publish id (`Nats-Msg-Id` of a fence, a session log's batch header) no other publish of any instance uses.
    func nextMessageID() -> String { messageIDs.next() }

    func renderMetrics(into text: inout PrometheusText) {
        metrics.render(into: &text, requests: connection.sentRequests)
    }

    // MARK: Upkeep

    func attach(_ resident: any ResidentSessions) {
        self.resident.withLock { $0 = resident }
        catalog.onChanges(
            token: { id in resident.accessTokenReplaced(id) }, timer: { id, at in resident.timerChanged(id, at: at) })
    }

    func maintain(_ resident: any ResidentSessions) {
        attach(resident)
        eraseDeletedSessions()
        trim(resident)
        dropSessionsClaimedElsewhere(resident)
    }

    /// Waits (bounded) for the records in flight, gives up every claim and the heartbeat so other
    /// instances take the sessions over at once, and disconnects.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if options.readOnly {
            catalog.stop()
            connection.close()
            return
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while watermark.outstanding > 0, ContinuousClock.now < deadline {
            usleep(2_000)
        }
        if watermark.outstanding > 0 {
            logger.warning(
                "stopping with records not yet acknowledged by JetStream", ["records": .int(Int(watermark.outstanding))]
            )
        }
        lease.stop()
        let open = logs.withLock { logs in Array(logs.values) }
        for log in open { log.giveUpClaim() }
        claims.stopBeating()
        catalog.stop()
        claims.watcher.stop()
        crashes.stop()
        _ = Blocking.call("the flush before closing", timeout: .seconds(2)) {
            (completion: @escaping @Sendable (Result<Void, NATSError>) -> Void) throws(NATSError) in
            try connection.flush(completion: completion)
        }
        connection.close()
    }
}

/// Why the NATS backend cannot start.
struct NATSStorageError: Error, Sendable, CustomStringConvertible {
    var description: String
}
