import Foundation
import Logs
import NATS

#if canImport(Glibc)
    import Glibc
#endif

/// Every setting the server reads, in the order `--help`, the README and `Config/server.json` list them: the
/// server's own (``server``) and those a catalog or an example adds after them (``adding(_:)``).
///
/// ```swift
/// let schema = ConfigurationSchema.server.adding(ExampleCatalog.settings)   // the search example's too
/// let options = try ConfigurationLoader.load(arguments: arguments, environment: environment, schema: schema)
/// ```
public struct ConfigurationSchema: Sendable {
    /// The settings, in order.
    public let settings: [ConfigurationSetting]

    /// The server's own settings.
    public static let server = ConfigurationSchema(settings: serverSettings)

    /// This schema with `contributed` settings after its own; their keys must be new.
    public func adding(_ contributed: [ConfigurationSetting]) -> ConfigurationSchema {
        for setting in contributed {
            precondition(self.setting(setting.key) == nil, "the setting \(setting.key) is in the schema already")
        }
        return ConfigurationSchema(settings: settings + contributed)
    }

    static let serverSettings: [ConfigurationSetting] = [
        .string(
            "http.host", \.http.host, expected: "an IPv4 or IPv6 address",
            "Address to listen on (0.0.0.0 for all IPv4 interfaces).", check: checkAddress),
        .integer("http.port", \.http.port, 0...65535, "TCP port to listen on; 0 picks a free one."),
        .integer("http.loops", \.http.loops, 0...256, "Event-loop threads; 0 means one per CPU the process may use."),
        .integer("http.backlog", \.http.backlog, 1...65535, "Listen backlog for connections not yet accepted."),
        .integer(
            "http.maxRequestLineBytes", \.http.maxRequestLineBytes, 64...1 << 20,
            "Longest request line; longer gets 414."),
        .integer("http.maxHeaderBytes", \.http.maxHeaderBytes, 256...1 << 22, "Largest header block; larger gets 431."),
        .integer(
            "http.maxHeaderCount", \.http.maxHeaderCount, 1...10_000,
            "Most header fields in one request; more gets 431."),
        .integer(
            "http.maxBodyBytes", \.http.maxBodyBytes, 0...1 << 30,
            "Largest request body; larger gets 413 body_too_large."),
        .seconds(
            "http.headTimeoutSeconds", \.http.headTimeoutSeconds, 0.1...3600,
            "Time allowed to send a complete request head."),
        .seconds(
            "http.idleTimeoutSeconds", \.http.idleTimeoutSeconds, 0.1...86_400,
            "Idle keep-alive connections close after this long."),
        .seconds(
            "http.bodyTimeoutSeconds", \.http.bodyTimeoutSeconds, 0.1...3600,
            "A request body that stops arriving for this long is cut off."),
        .seconds(
            "http.writeTimeoutSeconds", \.http.writeTimeoutSeconds, 0.1...3600,
            "A peer that stops reading a response for this long is cut off."),
        .seconds(
            "http.shutdownDeadlineSeconds", \.http.shutdownDeadlineSeconds, 0...3600,
            "On SIGTERM/SIGINT, in-flight work (requests and effects) gets this long; "
                + "what is still unanswered then gets 503 shutting_down, effects still running are cancelled "
                + "(their actions show as interrupted), and the process exits."
        ),
        .integer(
            "http.maxConnections", \.http.maxConnections, 0...10_000_000,
            "Most connections at once; more get 503 too_many_connections; 0: the open-file limit less a tenth "
                + "(16 to 1024 kept for files and outgoing connections)."
        ),
        .integer(
            "http.maxConnectionsPerAddress", \.http.maxConnectionsPerAddress, 0...10_000_000,
            "Most connections from one client address (limits.exemptAddresses and limits.trustedProxies excepted); "
                + "more get 503 too_many_connections; 0: no limit."
        ),
        .seconds(
            "sse.keepAliveSeconds", \.sse.keepAliveSeconds, 0.1...3600,
            "A quiet event stream gets a ': keep-alive' comment after this long."),
        .integer(
            "sse.subscriberBufferBytes", \.sse.subscriberBufferBytes, 4096...1 << 30,
            "Bytes queued for one subscriber before it counts as slow and skips states."),
        .integer(
            "sse.pulseBuffer", \.sse.pulseBuffer, 1...1_000_000,
            "Pulses held for a slow subscriber before its stream closes with event: error."),
        .integer(
            "sse.maxSubscribersPerSession", \.sse.maxSubscribersPerSession, 1...10_000_000,
            "Most subscribers of one session; more get 503 too_many_subscribers."),
        .integer(
            "sse.maxSubscribers", \.sse.maxSubscribers, 1...10_000_000,
            "Most subscribers of all sessions together; more get 503 too_many_subscribers."),
        .integer(
            "sse.maxSubscribersPerAddress", \.sse.maxSubscribersPerAddress, 0...10_000_000,
            """
            Most subscribers one client address may hold at once, each session of a GET /events stream counting as \
            one (limits.exemptAddresses excepted; behind limits.trustedProxies, the forwarded client); more get 503 \
            too_many_subscribers with Retry-After; 0: no limit.
            """),
        .integer(
            "sse.maxSessionsPerStream", \.sse.maxSessionsPerStream, 1...10_000,
            "Most sessions one GET /events?sessions=… stream may name; more get 400 invalid_sessions."),
        .integer(
            "sessions.limit", \.sessions.limit, 1...100_000_000,
            "Most sessions at once; more gets 503 too_many_sessions."),
        .seconds(
            "sessions.idleTTLSeconds", \.sessions.idleTTLSeconds, 0...31_536_000,
            "Sessions untouched (no request, no subscriber) this long are deleted; 0 never."),
        .integer(
            "sessions.actionLogLimit", \.sessions.actionLogLimit, 0...10_000_000,
            "Action-log entries kept per session; the oldest go first."),
        .integer(
            "sessions.actionLogBytes", \.sessions.actionLogBytes, 0...1 << 34,
            "Bytes of action JSON kept per session's action log (in memory and in the journal); "
                + "the oldest entries go first, and an action larger than this is not kept."
        ),
        .seconds(
            "sessions.waitTimeoutSeconds", \.sessions.waitTimeoutSeconds, 0.001...3600,
            "Longest wait of POST …/actions?wait=true before 504 timeout."),
        .integer(
            "sessions.stubRecordLimit", \.sessions.stubRecordLimit, 0...1_000_000,
            "Actions recorded per session while stub mode is on."),
        .integer(
            "sessions.maxQueuedActions", \.sessions.maxQueuedActions, 0...10_000_000,
            "Actions (with its effects' mutations) one session may hold waiting while its reactor is busy, such as a "
                + "slow reduce on the worker pool; more get 503 session_busy with Retry-After and are not taken; "
                + "0: no limit."),
        .seconds(
            "sessions.passivateAfterSeconds", \.sessions.passivateAfterSeconds, 0...31_536_000,
            "Sessions idle this long leave memory (snapshot first) and load back on their next request; 0 never."),
        .integer(
            "sessions.maxResident", \.sessions.maxResident, 1...100_000_000,
            "Most sessions in memory; beyond it the least recently used leave memory (not with storage.memoryOnly)."),
        .integer(
            "sessions.maxStateBytes", \.sessions.maxStateBytes, 1024...FileJournal.largestStateLimit,
            "Largest state a session may reach, in bytes of JSON; "
                + "an action whose state would be larger fails with 422 state_too_large and changes nothing."
        ),
        .string(
            "admin.token", \.admin.token,
            "Admin bearer token (better: the REACTOR_ADMIN_TOKEN environment variable), "
                + "at least 16 bytes unless http.host is loopback; empty: tokenFile, else generated at start."
        ),
        .string(
            "admin.tokenFile", \.admin.tokenFile, expected: "a file path",
            "File whose first line is the admin token (for container secrets)."),
        .string(
            "auth.sessions", \.auth.sessions, expected: "open, token or jwt",
            "Who may use a session: open (anyone who knows its id), "
                + "token (the capability token POST /sessions returns) or jwt (HS256 tokens from your backend).",
            check: {
                SessionAccessMode.Kind(rawValue: $0) == nil
                    ? "expected open, token or jwt, got \(ConfigurationValue.quoted($0))" : nil
            }),
        .strings(
            "auth.reactors", \.auth.reactors,
            "Reactors POST /sessions may create (others answer 403 forbidden); empty for every hosted one."),
        .bool(
            "auth.clientChosenIDs", \.auth.clientChosenIDs,
            """
            Whether POST /sessions may name the new session's id; false: the server picks every id (128 random bits) \
            and a request naming one gets 403 forbidden. Set it false with auth.sessions=token: a taken id answers \
            409 session_exists to anyone, telling them it exists, and anyone may claim an id before its user does.
            """),
        .string(
            "auth.jwt.secret", \.auth.jwt.secret,
            "HS256 secret of jwt mode, at least 32 bytes "
                + "(better: the REACTOR_AUTH_JWT_SECRET environment variable or auth.jwt.secretFile)."
        ),
        .string(
            "auth.jwt.secretFile", \.auth.jwt.secretFile, expected: "a file path",
            "File whose first line is the jwt secret (for container secrets)."),
        .integer(
            "auth.jwt.leewaySeconds", \.auth.jwt.leewaySeconds, 0...300,
            "Clock skew tolerated when checking a JWT's exp, nbf and iat."),
        .string("auth.jwt.audience", \.auth.jwt.audience, "The aud a JWT must name; empty: tokens must carry no aud."),
        .strings(
            "cors.allowedOrigins", \.cors.allowedOrigins,
            "Origins browsers may call the API from (https://app.example:8443), or * for any.", check: checkOrigin),
        .integer(
            "limits.requestsPerSecond", \.limits.requestsPerSecond, 0...10_000_000,
            "Requests per second one client address may sustain; more get 429 rate_limited with Retry-After; "
                + "0 for no limit."
        ),
        .integer(
            "limits.requestBurst", \.limits.requestBurst, 1...10_000_000,
            "Requests one client address may send at once before limits.requestsPerSecond applies."),
        .integer(
            "limits.sessionsPerMinute", \.limits.sessionsPerMinute, 0...10_000_000,
            "Sessions one client address may create per minute; more get 429 rate_limited; 0 for no limit."),
        .integer(
            "limits.sessionBurst", \.limits.sessionBurst, 1...10_000_000,
            "Sessions one client address may create at once before limits.sessionsPerMinute applies."),
        .integer(
            "limits.actionBytesPerMinute", \.limits.actionBytesPerMinute, 0...1 << 40,
            """
            Bytes of action bodies (POST /sessions/{id}/actions) one client address may send per minute, a \
            minute's worth at once, across all sessions: what it can add to the action logs the server keeps; \
            more get 429 rate_limited with Retry-After; 0 for no limit.
            """),
        .strings(
            "limits.trustedProxies", \.limits.trustedProxies,
            "Proxies (addresses or CIDR blocks) whose X-Forwarded-For names the client; others' is ignored.",
            check: checkNetwork),
        .strings(
            "limits.exemptAddresses", \.limits.exemptAddresses,
            "Client addresses or CIDR blocks no rate limit applies to (an app's backend); loopback by default.",
            check: checkNetwork),
        .string(
            "log.level", \.log.level,
            expected: "one of \(LogLevel.allCases.map(\.description).joined(separator: ", "))",
            "Least important log level written to standard error.",
            check: {
                LogLevel(name: $0) == nil
                    ? "expected one of \(LogLevel.allCases.map(\.description).joined(separator: ", ")), "
                        + "got \(ConfigurationValue.quoted($0))"
                    : nil
            }),
        .bool("log.accessLog", \.log.accessLog, "Log one line per request (method, route, status, microseconds)."),
        .integer(
            "log.slowReduceMilliseconds", \.log.slowReduceMilliseconds, 0...3_600_000,
            "A reduce taking at least this long logs a warning naming its reactor, session and duration (at most one "
                + "line a second per reactor, counting the others); 0: never. See the reactor's scheduler."),
        .string(
            "storage.backend", \.storage.backend, expected: "file or nats",
            "Where sessions are stored: file (the journal in storage.dataDir, on this machine) or nats "
                + "(a NATS JetStream cluster that several instances share; storage.nats.*).",
            check: {
                StorageKind(rawValue: $0) == nil ? "expected file or nats, got \(ConfigurationValue.quoted($0))" : nil
            }),
        .strings(
            "storage.nats.servers", \.storage.nats.servers,
            "NATS servers (nats://host:port, comma-separated) of the JetStream cluster, with storage.backend=nats.",
            check: {
                (try? NATSServerAddress.list($0)) == nil
                    ? "expected nats://host:port, got \(ConfigurationValue.quoted($0))" : nil
            }),
        .string(
            "storage.nats.user", \.storage.nats.user,
            "User name for the NATS servers (with storage.nats.password; better: the environment)."),
        .string(
            "storage.nats.password", \.storage.nats.password,
            "Password for the NATS servers (better: the REACTOR_STORAGE_NATS_PASSWORD environment variable)."),
        .string(
            "storage.nats.token", \.storage.nats.token,
            "Token for the NATS servers, instead of a user and password "
                + "(better: the REACTOR_STORAGE_NATS_TOKEN environment variable)."
        ),
        .integer(
            "storage.nats.replicas", \.storage.nats.replicas, 1...5,
            "Copies JetStream keeps of every record (a quorum acknowledges each); "
                + "clamped to 1, with a log line, on a server outside a cluster."
        ),
        .seconds(
            "storage.nats.claimTTLSeconds", \.storage.nats.claimTTLSeconds, 1...600,
            "How long a stopped or unreachable instance keeps its sessions "
                + "before another instance may take them over."),
        .string(
            "storage.nats.instance", \.storage.nats.instance, expected: "letters, digits, - and _",
            "This instance's name on the cluster (unique among live ones; keep it across restarts); "
                + "empty: the host name and port.",
            check: { $0.utf8.allSatisfy(\.isNameCharacter) ? nil : "use letters, digits, - and _" }),
        .string(
            "storage.nats.prefix", \.storage.nats.prefix, expected: "letters, digits, - and _",
            "First part of the names of the NATS stream, buckets and subjects "
                + "(deployments sharing a cluster use different ones).",
            check: { (try? NATSStorageNames(prefix: $0)) == nil ? "use 1 to 32 letters, digits, - and _" : nil }),
        .seconds(
            "storage.nats.timeoutSeconds", \.storage.nats.timeoutSeconds, 0.1...600,
            "Longest wait for one JetStream request."),
        .seconds(
            "storage.nats.startTimeoutSeconds", \.storage.nats.startTimeoutSeconds, 0...86_400,
            "How long start-up waits for JetStream (logging while it is not ready); 0: as long as it takes."),
        .seconds(
            "storage.nats.crashRecordSeconds", \.storage.nats.crashRecordSeconds, 0...60,
            "How long a process dying of its reactor's crash may spend storing the crash record in JetStream, "
                + "so other instances quarantine the session at once; 0: it does not try (the record waits in "
                + "storage.dataDir/crashes until this instance starts again)."),
        .integer(
            "storage.nats.trimAfterMessages", \.storage.nats.trimAfterMessages, 64...100_000_000,
            "Messages a session's subject may hold before the session writes a checkpoint "
                + "and what precedes it is purged: time travel and forks on NATS reach back to the latest trim "
                + "(an action takes one to three messages)."
        ),
        .string(
            "storage.dataDir", \.storage.dataDir, expected: "a directory path",
            "Directory where sessions are persisted, and crash records are written (crashes/; with "
                + "storage.backend=nats only those, until they reach JetStream).",
            check: { $0.isEmpty ? "must not be empty" : nil }),
        .bool(
            "storage.memoryOnly", \.storage.memoryOnly,
            "Keep sessions in memory only: nothing is written and a restart forgets every session."),
        .string(
            "storage.fsync", \.storage.fsync, expected: "always, batch or never",
            "When the journal is synced: always (before any answer; survives power loss), "
                + "batch (every window; survives kill -9), never (survives kill -9). "
                + "File backend only: with NATS, nats-server's sync_interval decides.",
            check: {
                FsyncPolicy(rawValue: $0) == nil
                    ? "expected always, batch or never, got \(ConfigurationValue.quoted($0))" : nil
            }),
        .integer(
            "storage.fsyncWindowMilliseconds", \.storage.fsyncWindowMilliseconds, 1...60_000,
            "With fsync batch: how often the journal is synced to disk."),
        .integer(
            "storage.snapshotEvery", \.storage.snapshotEvery, 1...10_000_000,
            "Mutations of one session between two snapshots (recovery replays at most this many)."),
        .integer(
            "storage.segmentBytes", \.storage.segmentBytes, 4096...1 << 31,
            "Journal segment size; compaction deletes the oldest whole segments once that frees at least twice what it "
                + "copies."),
        .integer(
            "storage.historyVersions", \.storage.historyVersions, 0...1_000_000,
            "Newest versions of each session that time travel (GET /admin/sessions/{id}/versions/{v}) and forks reach "
                + "on the file journal, across compaction and restarts, within storage.historyBytes; 0: only the "
                + "latest snapshot and what follows it."),
        .integer(
            "storage.historyBytes", \.storage.historyBytes, 0...1 << 34,
            "Bytes of journal records (snapshots and state records) each session keeps for those versions; the oldest "
                + "go first, a snapshot's worth at a time; 0: only the latest snapshot and what follows it."),
        .integer(
            "storage.checkAtStart", \.storage.checkAtStart, 0...1_000_000,
            "Stored sessions read back at start, in the background, to check that their records decode with the "
                + "reactors of this server (migrated or as stored; no reduce runs): the summary is logged and failures "
                + "counted on /metrics "
                + "(reactor_session_load_failures_total); a sample when more are stored; 0: none. "
                + "`reactor-server verify` checks them all without serving."),
    ]

    /// The setting with this dotted key.
    public func setting(_ key: String) -> ConfigurationSetting? {
        settings.first { $0.key == key }
    }

    /// The closest known key, for "did you mean" hints.
    func suggestion(for key: String) -> String? {
        let ranked = settings.map { ($0.key, Self.editDistance($0.key.lowercased(), key.lowercased())) }
            .min { $0.1 < $1.1 }
        guard let (best, distance) = ranked, distance <= max(2, key.count / 3) else { return nil }
        return best
    }

    /// The configuration as the JSON document `Config/server.json` holds, sections in schema order.
    public func json(for configuration: ServerConfiguration) -> String {
        let root = ConfigurationTree()
        for setting in settings {
            root.insert(setting.key.split(separator: ".").map(String.init)[...], setting.value(in: configuration))
        }
        return root.json(indent: "") + "\n"
    }

    /// The README's configuration reference: one row per setting (a test keeps the README equal to it).
    public func markdownTable() -> String {
        let defaults = ServerConfiguration()
        var out = "| key | environment | default | meaning |\n| --- | --- | --- | --- |\n"
        for setting in settings {
            let help = setting.help.replacingOccurrences(of: "|", with: "\\|")
            out +=
                "| `\(setting.key)` | `\(setting.environmentName)` | `\(setting.value(in: defaults).json)` | "
                + "\(help) (\(setting.expected)) |\n"
        }
        return out
    }

    static func checkAddress(_ host: String) -> String? {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 { return nil }
        return "expected an IPv4 or IPv6 address such as 127.0.0.1 or 0.0.0.0, got \(ConfigurationValue.quoted(host))"
    }

    static func checkNetwork(_ network: String) -> String? {
        IPNetwork(network) == nil
            ? "expected an IP address or CIDR block such as 10.0.0.0/8 or 2001:db8::/32, "
                + "got \(ConfigurationValue.quoted(network))"
            : nil
    }

    static func checkOrigin(_ origin: String) -> String? {
        if origin == "*" { return nil }
        let valid =
            (origin.hasPrefix("http://") || origin.hasPrefix("https://"))
            && !origin.hasSuffix("/") && origin.split(separator: "/", omittingEmptySubsequences: false).count == 3
            && !origin.contains(where: { $0.isWhitespace })
        return valid
            ? nil : "an origin is scheme://host[:port] with no path (or *), got \(ConfigurationValue.quoted(origin))"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
