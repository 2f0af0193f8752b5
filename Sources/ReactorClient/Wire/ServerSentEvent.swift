/// One event dispatched from an event stream, as the WHATWG HTML standard's "Interpreting an event stream"
/// defines it: its type, its data, and the last event ID in force when it was dispatched.
///
/// ```swift
/// ServerSentEvent(type: "state", data: #"{"value":1}"#, lastEventID: "1")
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field, or `message` when the event set none (or set it empty).
    public var type: String
    /// The `data:` lines joined with LF (a single trailing LF removed).
    public var data: String
    /// The stream's last event ID when this event was dispatched: an `id:` persists across events until
    /// another replaces it; an empty `id:` resets it to the empty string.
    public var lastEventID: String

    /// An event from its three parts.
    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}

extension ServerSentEvent: CustomStringConvertible {
    /// `type[id]: data`, for test output and logs.
    public var description: String { "\(type)[\(lastEventID)]: \(data)" }
}
