/// Every setting of the server, with the embedded defaults that `swift run reactor-server` uses, and the
/// sections a catalog adds (``ConfigurationSection``; the search example's is `configuration[section: .search]`).
///
/// `Config/server.json` holds the same values; environment variables (`REACTOR_HTTP_PORT`, …) override
/// the file, and command-line flags (`--port`, `--host`, …) override both. See ``ConfigurationSchema``
/// for the list, ranges and help texts.
public struct ServerConfiguration: Sendable, Equatable {
    public var http = HTTP()
    public var sse = SSE()
    public var sessions = Sessions()
    public var admin = Admin()
    public var auth = Auth()
    public var cors = CORS()
    public var limits = Limits()
    public var log = Log()
    public var storage = Storage()
    /// What catalogs and examples add, by type (``subscript(section:)``).
    var sections = ConfigurationSections()

    public init() {}

    /// Listening and HTTP/1.1 protocol limits.
    public struct HTTP: Sendable, Equatable {
        public var host = "127.0.0.1"
        public var port = 8080
        /// Event loops; 0 means one per CPU the process may run on.
        public var loops = 0
        public var backlog = 1024
        public var maxRequestLineBytes = 8 * 1024
        public var maxHeaderBytes = 32 * 1024
        public var maxHeaderCount = 100
        public var maxBodyBytes = 1024 * 1024
        public var headTimeoutSeconds = 10.0
        public var idleTimeoutSeconds = 60.0
        public var bodyTimeoutSeconds = 30.0
        public var writeTimeoutSeconds = 30.0
        public var shutdownDeadlineSeconds = 10.0
        /// Most connections at once; 0 derives it from the open-file limit (less a reserve).
        public var maxConnections = 0
        /// Most connections from one client address (`limits.exemptAddresses` and `limits.trustedProxies`
        /// excepted); 0 for no limit.
        public var maxConnectionsPerAddress = 1000
    }

    /// Server-Sent Event streams.
    public struct SSE: Sendable, Equatable {
        public var keepAliveSeconds = 15.0
        /// Bytes queued for one subscriber before it counts as too slow (states are then coalesced).
        public var subscriberBufferBytes = 256 * 1024
        /// Pulses held for a too-slow subscriber before its stream is closed with `event: error`.
        public var pulseBuffer = 256
        /// Most subscribers of one session; more get 503 `too_many_subscribers`.
        public var maxSubscribersPerSession = 10_000
        /// Most subscribers of all sessions together.
        public var maxSubscribers = 100_000
        /// Most subscribers one client address may hold at once (a multiplexed stream counts each of its
        /// sessions; `limits.exemptAddresses` excepted); 0 for no limit.
        public var maxSubscribersPerAddress = 10_000
        /// Most sessions one `GET /events?sessions=…` stream may name; more get 400 `invalid_sessions`.
        public var maxSessionsPerStream = 100
    }

    /// Session lifetime and limits.
    public struct Sessions: Sendable, Equatable {
        public var limit = 100_000
        /// Sessions with no request and no subscriber for this long are deleted; 0 keeps them forever.
        public var idleTTLSeconds = 24 * 3600.0
        /// Action-log entries kept per session (oldest dropped first).
        public var actionLogLimit = 10_000
        /// Bytes of action JSON kept in one session's action log (oldest dropped first).
        public var actionLogBytes = 4 << 20
        /// Longest `?wait=true` wait before 504.
        public var waitTimeoutSeconds = 30.0
        /// Actions recorded per session while stub mode is on.
        public var stubRecordLimit = 1_000
        /// Actions one session may hold waiting for its busy reactor before more get 503 (0: no limit).
        public var maxQueuedActions = 1_000
        /// Sessions idle this long leave memory (snapshot first) and load back on their next request; 0 never.
        public var passivateAfterSeconds = 600.0
        /// Most sessions in memory at once; beyond it the least recently used leave (with storage).
        public var maxResident = 100_000
        /// The largest state a session may reach, as JSON bytes; a mutation past it is refused.
        public var maxStateBytes = 1 << 20
    }

    /// Admin API authentication.
    public struct Admin: Sendable, Equatable {
        /// The bearer token; empty means: read `tokenFile`, else generate one at start.
        public var token = ""
        /// A file whose first line is the token (container secrets); empty for none.
        public var tokenFile = ""
    }

    /// Who may use sessions (API.md's "Access to sessions").
    public struct Auth: Sendable, Equatable {
        /// `open`, `token` or `jwt` (see `SessionAccessMode`).
        public var sessions = "open"
        /// The reactors `POST /sessions` may create; empty for every hosted one.
        public var reactors: [String] = []
        /// Whether `POST /sessions` may name the new session's id; false: the server picks every id (in
        /// `token` mode, a taken id's 409 would tell anyone that it exists and let them claim ids first).
        public var clientChosenIDs = true
        /// JSON Web Tokens (`jwt` mode).
        public var jwt = JWT()

        public init() {}

        /// The `jwt` mode's secret and checks.
        public struct JWT: Sendable, Equatable {
            /// The HS256 shared secret (at least 32 bytes); better from REACTOR_AUTH_JWT_SECRET or `secretFile`.
            public var secret = ""
            /// A file whose first line is the secret (container secrets).
            public var secretFile = ""
            /// Clock skew tolerated for `exp`, `nbf` and `iat`.
            public var leewaySeconds = 60
            /// The `aud` tokens must name; empty: tokens must not carry one.
            public var audience = ""

            public init() {}
        }
    }

    /// Cross-origin access for browsers.
    public struct CORS: Sendable, Equatable {
        /// Origins allowed to call the API (`https://app.example`), or `*` for any; empty for none.
        public var allowedOrigins: [String] = []
    }

    /// Per-client limits (API.md's "Limits that hold under abuse").
    public struct Limits: Sendable, Equatable {
        /// Requests per second one client address may sustain; 0 turns the limit off.
        public var requestsPerSecond = 100
        /// Requests one client address may send at once before the rate applies.
        public var requestBurst = 200
        /// Sessions one client address may create per minute; 0 turns the limit off.
        public var sessionsPerMinute = 30
        /// Sessions one client address may create at once before the rate applies.
        public var sessionBurst = 30
        /// Bytes of action bodies one client address may send per minute (a minute's worth at once), which
        /// bounds the action log it can make the server keep; 0 turns the limit off.
        public var actionBytesPerMinute = 16 << 20
        /// Proxies whose `X-Forwarded-For` names the client (addresses or CIDR blocks).
        public var trustedProxies: [String] = []
        /// Client addresses no rate limit applies to (addresses or CIDR blocks): loopback by default.
        public var exemptAddresses = ["127.0.0.0/8", "::1"]
    }

    /// Logging.
    public struct Log: Sendable, Equatable {
        public var level = "info"
        /// One line per request (method, route, status, duration).
        public var accessLog = false
        /// A `reduce` at least this long logs a warning naming its reactor and session (at most one line a second
        /// per reactor); 0: never.
        public var slowReduceMilliseconds = 10
    }

    /// Where sessions are persisted.
    public struct Storage: Sendable, Equatable {
        /// Which backend stores sessions: `file` or `nats` (see ``StorageKind``).
        public var backend = "file"
        /// The NATS JetStream backend's settings (`storage.backend=nats`).
        public var nats = NATS()
        public var dataDir = "./data"
        /// Keep sessions in memory only: nothing is written, a restart forgets every session.
        public var memoryOnly = false
        /// `always`, `batch` or `never` (see ``FsyncPolicy``).
        public var fsync = "batch"
        /// With `batch`: how often the journal is synced to disk.
        public var fsyncWindowMilliseconds = 50
        /// Mutations of one session between two snapshots.
        public var snapshotEvery = 1000
        /// Journal segment size; compaction deletes whole segments.
        public var segmentBytes = 64 << 20
        /// Newest versions of each session that time travel and forks reach, within `historyBytes`.
        public var historyVersions = 100
        /// Bytes of past snapshots and state records kept per session for time travel.
        public var historyBytes = 1 << 20
        /// Stored sessions read back at start to check that they load (a sample when more are stored).
        public var checkAtStart = 100

        /// Where the NATS backend keeps sessions, and how it shares them with other instances.
        public struct NATS: Sendable, Equatable {
            /// `nats://host:port` URLs of the cluster's servers (credentials may be in them).
            public var servers: [String] = ["nats://127.0.0.1:4222"]
            public var user = ""
            public var password = ""
            public var token = ""
            /// Copies of every stream: 3 on a cluster; clamped to 1 (with a log line) on a lone server.
            public var replicas = 3
            /// How long a dead instance's claims keep its sessions before another instance takes them.
            public var claimTTLSeconds = 5.0
            /// This instance's name among those sharing the cluster; empty: host name and port.
            public var instance = ""
            /// The first part of the names of the stream, buckets and subjects.
            public var prefix = "reactor"
            /// How long one JetStream request may take.
            public var timeoutSeconds = 5.0
            /// How long start-up waits for JetStream; 0: as long as it takes.
            public var startTimeoutSeconds = 0.0
            /// How long the fatal-signal handler may spend storing a crash record in JetStream; 0: it does not.
            public var crashRecordSeconds = 3.0
            /// Messages a session's subject may hold before the session checkpoints and what precedes the
            /// checkpoint is purged: how far back time travel and forks reach on NATS.
            public var trimAfterMessages = 2048
        }
    }
}
