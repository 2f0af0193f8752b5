/// Where an event stream's connection stands, for a status line in a UI.
///
/// ```swift
/// for await state in reactor.connection {
///     switch state {
///     case .connecting: status = "connecting …"
///     case .connected: status = "live"
///     case .reconnecting(let delay, let cause): status = "offline (\(cause)); retrying in \(delay)"
///     case .ended(let reason): status = "ended: \(reason)"
///     }
/// }
/// ```
public enum ConnectionState: Sendable, Hashable {
    /// A request is on its way (the first one, or again after a wait).
    case connecting
    /// The server accepted the stream; events flow.
    case connected
    /// The connection dropped or was refused for a reason that may pass; the next attempt starts after `after`.
    case reconnecting(after: Duration, cause: ReactorClientError)
    /// The stream is over and will not reconnect.
    case ended(EndReason)

    /// Whether events can arrive right now.
    public var isConnected: Bool { self == .connected }
}

/// Why an event stream ended for good.
public enum EndReason: Sendable, Hashable {
    /// The server ended it (`event: end`: the session was deleted; for several sessions, once every part ended).
    case finished(reason: String)
    /// The client stopped it (``RemoteReactor/stop()``).
    case stopped
    /// The server refused it for a reason that will not pass by waiting (unknown session, unauthorized …),
    /// or what it sent could not be read.
    case failed(ReactorClientError)
}

extension ConnectionState: CustomStringConvertible {
    /// Short text for logs.
    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .reconnecting(let delay, let cause): "reconnecting after \(delay) (\(cause))"
        case .ended(let reason): "ended (\(reason))"
        }
    }
}

extension EndReason: CustomStringConvertible {
    /// Short text for logs.
    public var description: String {
        switch self {
        case .finished(let reason): "finished: \(reason)"
        case .stopped: "stopped"
        case .failed(let error): "failed: \(error)"
        }
    }
}
