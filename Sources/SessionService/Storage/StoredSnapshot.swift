/// A session at one version, as a backend keeps it: everything needed to resume it without any
/// older record (the action log is kept apart, in accept and checkpoint records).
struct StoredSnapshot: Sendable, Equatable {
    var id: String
    var reactor: String
    var version: UInt64
    var lastSeq: UInt64
    var stub: Bool
    /// The reducer's accumulator (the untransformed state) as JSON.
    var state: [UInt8]
    /// Always empty in snapshots written now (the log lives in accept and action-log records); read
    /// from snapshots of earlier versions of the file journal, which embedded it.
    var actions: [ActionLogEntry]
    /// Seqs of actions whose effects were still running when the snapshot was taken, and of retained
    /// actions a crash interrupted earlier (both show as interrupted if a crash follows).
    var running: [UInt64]
    /// The counts of the state's `@Pulse` properties by name (the state's JSON holds their values only),
    /// so counts continue after a reload instead of starting again at 0.
    var pulses: [String: UInt64]
    /// Tells this session from an earlier one with the same id (deleted since): random, set by the backend
    /// when it stores the session; 0 in records written before incarnations existed (unknown).
    var incarnation: UInt64 = 0
    /// Every interrupted action up to this seq was handed to the reactor's `recover(interrupted:state:)`
    /// and its mutations are in `state`: a later load does not recover it again.
    var recoveredThrough: UInt64
    /// The session's parameters as JSON (`"params"` of `POST /sessions`, as its reactor's parameter type
    /// encoded them); empty for a reactor without. Every snapshot carries them: they are the session's for life.
    var params: [UInt8] = []
    /// The reactor's `Reactor.storageVersion` that wrote `state`; 1 in snapshots written before
    /// versions existed.
    var storageVersion = 1
    /// The session's pending timers when the snapshot was taken (records before it are not needed for them).
    var timers: [PendingTimer] = []
    /// The number of the session's latest timer record, so later ones are numbered above it.
    var timerSerial: UInt64 = 0

    init(
        id: String, reactor: String, version: UInt64, lastSeq: UInt64, stub: Bool, state: [UInt8],
        actions: [ActionLogEntry] = [],
        running: [UInt64] = [], pulses: [String: UInt64] = [:], recoveredThrough: UInt64 = 0, params: [UInt8] = [],
        storageVersion: Int = 1
    ) {
        self.params = params
        self.storageVersion = storageVersion
        self.id = id
        self.reactor = reactor
        self.version = version
        self.lastSeq = lastSeq
        self.stub = stub
        self.state = state
        self.actions = actions
        self.running = running
        self.pulses = pulses
        self.recoveredThrough = recoveredThrough
    }
}
