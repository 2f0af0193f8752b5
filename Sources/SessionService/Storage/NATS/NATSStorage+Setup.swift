import Foundation
import Logs
import NATS

// Start-up: JetStream ready, the stream and buckets in place, the heartbeat running, the catalog read.
extension NATSStorage {
    /// Waits as long as start-up may (`storage.nats.startTimeoutSeconds`, or for ever), logging every
    /// few seconds while JetStream is not ready (a cluster electing its leader, servers not up yet).
    func setUp() throws(NATSStorageError) {
        let wait = options.startTimeout ?? .seconds(10 * 365 * 86_400)
        let servers = options.servers.map(\.description).joined(separator: ",")
        let logger = self.logger
        let jetStream = self.jetStream
        if case .failure(let error) = Blocking.run({ () async throws(NATSError) in
            try await jetStream.retrying("waiting for JetStream on \(servers)", timeout: wait, logger: logger) {
                () async throws(NATSError) in
                try await jetStream.accountInfo()
            }
        }) {
            throw NATSStorageError(description: "JetStream on \(servers) is not ready: \(error)")
        }
        maxMessageBytes.store(max(connection.serverInfo.maxPayload - 1024, 4096), ordering: .relaxed)
        if !options.readOnly {
            let replicas = try createStreams(waiting: wait)
            let version = connection.serverInfo.version
            if let warning = NATSServerIssues.concurrentExpectedSequencesWarning(version: version, replicas: replicas) {
                logger.warning(warning, ["version": .string(version), "replicas": .int(replicas)])
            }
            startHeartbeats()
            guard lease.isValid || waitForLease(wait) else {
                throw NATSStorageError(
                    description: "this instance's heartbeat is not acknowledged by JetStream on \(servers)")
            }
        }
        guard catalog.follow(waiting: wait, logger: logger) else {
            throw NATSStorageError(description: "the sessions bucket could not be read from JetStream on \(servers)")
        }
        if options.readOnly {
            logger.info(
                "reading sessions on NATS JetStream without serving them",
                ["servers": .string(servers), "sessions": .int(count)])
            return
        }
        try serveHandOffs()
        followRecordsLeader()
        claims.watcher.start()
        try crashes.follow(waiting: wait)
        logger.notice(
            "storage on NATS JetStream ready",
            [
                "servers": .string(servers), "instance": .string(options.instance), "sessions": .int(count),
                "stream": .string(names.recordsStream),
            ])
    }

    /// Creates or updates the records stream and the three buckets; the replicas they keep. More replicas than a
    /// server outside a cluster holds are clamped to 1 with a log line; while a cluster is still forming, it waits.
    func createStreams(waiting wait: Duration) throws(NATSStorageError) -> Int {
        var replicas = options.replicas
        while true {
            let configs = streamConfigs(replicas: replicas)
            let jetStream = self.jetStream
            let logger = self.logger
            let result = Blocking.run { () async throws(NATSError) in
                for config in configs {
                    _ = try await jetStream.retrying(
                        "creating the stream \(config.name)", timeout: wait, logger: logger
                    ) { () async throws(NATSError) in
                        try await jetStream.createOrUpdateStream(config)
                    }
                }
            }
            switch result {
            case .success:
                return replicas
            case .failure(.jetStream(let error))
            where error.errorCode == JetStreamAPIError.replicasNotSupported && replicas > 1:
                logger.notice(
                    "the NATS server is not part of a cluster: "
                        + "its streams keep 1 copy, not storage.nats.replicas=\(replicas); "
                        + "a restart of that server keeps what it acknowledged, a lost disk does not",
                    [:])
                replicas = 1
            case .failure(let error):
                throw NATSStorageError(description: "cannot create the NATS streams and buckets: \(error)")
            }
        }
    }

    /// The records stream and the sessions, claims and instances buckets.
    func streamConfigs(replicas: Int) -> [StreamConfig] {
        var records = StreamConfig(name: names.recordsStream, subjects: [names.recordsWildcard], replicas: replicas)
        records.duplicateWindow = .seconds(120)
        var sessions = KeyValueConfig(bucket: names.sessionsBucket, replicas: replicas)
        sessions.maxValueSize = 1 << 16
        let claims = KeyValueConfig(bucket: names.claimsBucket, replicas: replicas)
        let instances = KeyValueConfig(bucket: names.instancesBucket, ttl: options.claimTTL, replicas: replicas)
        // A record holds the action that crashed (64 KiB at most, base64) and a few names.
        var crashes = KeyValueConfig(bucket: names.crashesBucket, replicas: replicas)
        crashes.maxValueSize = 1 << 17
        return [records, sessions.streamConfig, claims.streamConfig, instances.streamConfig, crashes.streamConfig]
    }

    // MARK: Heartbeat

    /// Renews this instance's heartbeat four times per claim TTL on a thread of its own.
    func startHeartbeats() {
        let thread = Thread { [self] in
            while lease.isRunning {
                let started = ContinuousClock.now
                heartbeat()
                let pause = lease.interval - (ContinuousClock.now - started)
                lease.pause(max(pause, .milliseconds(10)))
            }
        }
        thread.name = "reactor.storage.heartbeat"
        thread.start()
    }

    /// Waits until the first heartbeat is acknowledged.
    func waitForLease(_ wait: Duration) -> Bool {
        let started = ContinuousClock.now
        while !lease.isValid {
            if ContinuousClock.now - started > wait { return false }
            usleep(5_000)
        }
        return true
    }

    /// Puts this instance's heartbeat; after a lapse, checks every claim before writing again.
    func heartbeat() {
        let sent = OwnershipLease.now()
        let result = claims.beat(timeout: lease.interval * 2)
        guard lease.isRunning else { return }
        switch result {
        case .success:
            if !lease.isValid, !renewClaims() { return }
            lease.renew(sentAt: sent)
            let open = logs.withLock { Array($0.values) }
            for log in open { log.resume() }
        case .failure(let error):
            lease.heartbeatFailed(error.description)
            if !lease.isValid {
                logger.warning(
                    "the heartbeat is not acknowledged: changes are refused until it is",
                    ["error": .string(error.description)])
            }
        }
    }

    /// After a lapse of the lease, renews the claim of every session this instance runs (a
    /// compare-and-set on its revision, so an instance about to take one over finds it renewed and
    /// leaves it); a session whose claim another instance took is given up here. False when a claim
    /// could not be checked: the lease stays lapsed.
    func renewClaims() -> Bool {
        let open = logs.withLock { Array($0.values) }
        guard !open.isEmpty else { return true }
        logger.notice(
            "the claim lease lapsed; checking the claims of the sessions in memory", ["sessions": .int(open.count)])
        for log in open {
            let (revision, stopped) = log.state.withLock { ($0.claimRevision, $0.stop != nil) }
            if stopped { continue }
            let id = log.id
            switch claims.renew(id, revision: revision) {
            case .success(let next):
                log.state.withLock { $0.claimRevision = next }
            case .failure(let error) where error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence:
                let current = claims.read(id)
                if case .success(let found?) = current, found.claim == claims.own {
                    log.state.withLock { $0.claimRevision = found.revision }
                } else {
                    var owner: String?
                    if case .success(let found?) = current { owner = found.claim.instance }
                    log.stop(
                        because:
                            "session \(id) was taken over by instance \(owner ?? "another instance") "
                            + "while this one was not heard from",
                        fenced: true)
                }
            case .failure(let error):
                // Unknown: keep the lease lapsed; the next heartbeat checks again.
                logger.warning(
                    "cannot renew a session's claim now", ["session": .string(id), "error": .string(error.description)])
                lease.heartbeatFailed("a claim could not be renewed: \(error)")
                return false
            }
        }
        return true
    }
}
