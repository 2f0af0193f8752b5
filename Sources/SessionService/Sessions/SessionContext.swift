import JSONCodec
import Logs

/// What every session of one server shares: limits, metrics, the clock and the logger.
public final class SessionContext: Sendable {
    /// Per-session limits from the configuration.
    public struct Limits: Sendable {
        public var actionLogLimit = 10_000
        /// Bytes of action JSON kept in one session's action log (`sessions.actionLogBytes`).
        public var actionLogBytes = 4 << 20
        public var stubRecordLimit = 1_000
        /// Pulses held for a subscriber that is behind before its stream is closed with `event: error`.
        public var pulseBuffer = 256
        /// The largest state, as JSON bytes, a session may commit (`sessions.maxStateBytes`).
        public var maxStateBytes = 1 << 20
        /// The largest request body (`http.maxBodyBytes`): the JSON limit of every body read.
        public var maxBodyBytes = 1 << 20
        /// Mutations of one session between two snapshots (`storage.snapshotEvery`).
        public var snapshotEvery = 1000
        /// A reduce at least this long is logged (`log.slowReduceMilliseconds`); 0: never.
        public var slowReduceNanoseconds: UInt64 = 10_000_000

        public init() {}

        /// The parser for request bodies: its document limit is the body limit, so a body the HTTP layer
        /// accepted is never refused as too large by the JSON reader (one limit, one answer: 413).
        @inlinable public var bodyParser: JSONParser { JSONParser(maxBytes: maxBodyBytes) }
    }

    public let limits: Limits
    public let metrics: ServiceMetrics
    public let clock: any ServiceClock
    public let logger: Logger
    /// Where sessions are stored; nil in memory-only mode.
    let storage: (any StorageBackend)?
    /// When each session's next timer falls due, in memory or not: what loads a session whose timer is due.
    let timers: TimerIndex

    /// A context for sessions stored in `storage` (nil: memory only).
    init(
        limits: Limits = Limits(), metrics: ServiceMetrics = ServiceMetrics(),
        clock: any ServiceClock = SystemServiceClock(), logger: Logger = .disabled, storage: (any StorageBackend)? = nil
    ) {
        self.limits = limits
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.storage = storage
        timers = TimerIndex(clock: clock, sessions: metrics.timerSessions)
    }
}
