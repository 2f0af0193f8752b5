/// One accepted action as the admin action log shows it.
public struct ActionLogEntry: Sendable, Equatable {
    public var seq: UInt64
    /// When it was accepted, nanoseconds since the Unix epoch.
    public var at: Int64
    /// The action as it decoded, encoded again in the `{"type": …}` shape (members the reactor does not
    /// read are not kept): valid JSON, bounded by what the action type holds.
    public var action: [UInt8]
    public var stubbed: Bool
    /// Accepted before a crash that stopped its effects before they finished; never re-run.
    public var interrupted: Bool
    /// Who sent it: a client's request, or one of the session's own effects (`ReactorContext.send`).
    public var origin: ActionOrigin
    /// The timer that sent it (`"timer"` in the admin action log), nil for an action a client or an effect sent.
    public var timer: String?

    @inlinable
    public init(
        seq: UInt64, at: Int64, action: [UInt8], stubbed: Bool, interrupted: Bool = false,
        origin: ActionOrigin = .request, timer: String? = nil
    ) {
        self.seq = seq
        self.at = at
        self.action = action
        self.stubbed = stubbed
        self.interrupted = interrupted
        self.origin = origin
        self.timer = timer
    }
}

/// Where an accepted action came from, as the action log shows it (`"from"`).
public enum ActionOrigin: String, Sendable, Equatable {
    /// Sent by a client (`POST /sessions/{id}/actions`); the log leaves `"from"` out.
    case request
    /// Sent by one of the session's own effects through its `ReactorContext`: `"from": "effect"`.
    case effect
}
