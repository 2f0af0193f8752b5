import JSONCodec
import Reactors

/// A session's state as clients see it: its version and the state as one line of JSON.
public struct EncodedSnapshot: Sendable, Equatable {
    public var version: UInt64
    public var state: [UInt8]

    @inlinable
    public init(version: UInt64, state: [UInt8]) {
        self.version = version
        self.state = state
    }
}

/// One live subscriber as the admin listing shows it.
public struct SubscriberInfo: Sendable, Equatable {
    public var queuedBytes: Int
    /// The `id:` of the last state event written to it, nil before the first.
    public var lastEventID: UInt64?
    /// States skipped because it was too slow to read them.
    public var drops: Int
    /// Its `?select=` pointer, if any.
    public var select: String?
}

/// What an event stream follows: a session's states and pulses, whether it runs here (`Session`) or on another
/// instance and is relayed from there (`RelayedSession`).
public protocol SessionStreamSource: AnyObject, Sendable {
    var id: String { get }
    var reactorName: String { get }

    /// The latest version and state.
    func snapshot() -> EncodedSnapshot

    /// Registers `subscriber` with `sink`: the sink gets the latest state unless the subscriber has it,
    /// then every new state and pulse. The sink is set under the session's lock, where the notices of
    /// its transport are handled: they may come at once, from another thread (a stream whose
    /// connection closed as it opened), and find the subscriber closed before it was added, which then
    /// never holds the sink. Unless `.subscribed`, the sink was not used.
    func subscribe(_ subscriber: Subscriber, sink: any SubscriberSink) -> SubscribeOutcome
    /// What the subscriber's transport reports: it drained after an overflow, or it closed.
    func handle(_ notice: SubscriberNotice, for subscriber: Subscriber)
    func subscriberInfo() -> [SubscriberInfo]
    var subscriberCount: Int { get }

    /// Monotonic nanoseconds of the last request or subscriber activity (idle expiry).
    var lastActive: UInt64 { get }
    func touch(at nanoseconds: UInt64)
    /// Ends the session: cancels effects and ends every subscription (``SubscriptionEnd/deleted``).
    func end()
    /// Whether it left memory (passivated); a request still holding it looks the session up again.
    var isPassivated: Bool { get }
    /// The storage position of its newest record: an answer showing its state waits for it to be durable
    /// (0: nothing of it is stored here).
    var storedPosition: UInt64 { get }
}

/// A session this instance runs, as the HTTP layer drives it whatever its reactor type: actions, stub mode, the
/// action log, its effects.
public protocol HostedSession: SessionStreamSource {
    /// Its parameters as JSON, given at creation and kept for life; empty when its reactor takes none.
    var params: [UInt8] { get }

    var isStubEnabled: Bool { get }
    func setStub(enabled: Bool)
    /// Forces a state (stub mode only); replies with the new snapshot or an error.
    func forceState(json: [UInt8], reply: @escaping @Sendable (Result<EncodedSnapshot, SessionError>) -> Void)

    func actionLog(since: UInt64, limit: Int) -> (entries: [ActionLogEntry], next: UInt64?)
    /// Why the states of these accepted actions were refused (`state_too_large`, …), for those that were.
    func refusedActions(_ seqs: [UInt64]) -> [UInt64: ActionRejection]
    /// Its pending timers, soonest first.
    func pendingTimers() -> [PendingTimer]
    /// Cancels its pending timer `name`; false when none has that name.
    func cancelTimer(_ name: String) -> Bool

    /// Ends the session here because another process took it over: effects stop, subscribers get
    /// `event: error` with code `session_moved` and their streams close.
    func endMoved(_ reason: String)
    /// How many effect tasks it runs now.
    var runningEffects: Int { get }
    /// At shutdown, once no request can reach it: stops the session, cancelling the effects still
    /// running (see `Session/stopAtShutdown()`); returns how many effect tasks were cut off.
    func stopAtShutdown() -> Int
    /// Returns once none of its effect tasks runs any more (after ``stopAtShutdown()``).
    func waitForEffects() async
}

/// A hosted session as the store keeps it: one that can be stored, leave memory and come back, or move to
/// another instance (every session the store holds; without storage these do nothing).
public protocol PersistentSession: HostedSession {
    /// Leaves memory after journaling a snapshot; false when it must stay resident.
    func passivate() -> Bool
    /// Leaves memory for another process after journaling a snapshot, ending its subscriptions with
    /// `session_moved`; false while an effect runs (it must settle first) or when it is not persisted.
    func handOff(to instance: String) -> Bool
    /// Whether enough mutations arrived since the last snapshot that one should be written.
    var isSnapshotDue: Bool { get }
    /// Journals a snapshot now.
    func writeSnapshot()
    /// Journals a snapshot and the retained action log, so none of its older records are needed (compaction).
    func writeCompactionCheckpoint()
    /// Sends the action of every timer of it due now; returns how many fired. Throws `.passivated` or
    /// `.ended` when it left memory meanwhile (look it up again).
    func fireDueTimers() throws(SessionError) -> Int
}
