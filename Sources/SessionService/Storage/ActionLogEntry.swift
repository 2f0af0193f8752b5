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
    /// The timer that sent it (`"timer"` in the admin action log), nil for an action a client sent.
    public var timer: String?

    @inlinable
    public init(
        seq: UInt64, at: Int64, action: [UInt8], stubbed: Bool, interrupted: Bool = false, timer: String? = nil
    ) {
        self.seq = seq
        self.at = at
        self.action = action
        self.stubbed = stubbed
        self.interrupted = interrupted
        self.timer = timer
    }
}
