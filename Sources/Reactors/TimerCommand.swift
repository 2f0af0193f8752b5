/// What a `schedule` or `cancelTimer` effect asks of the runtime's host (``ReactorRuntime/setTimerHandler(_:)``).
public enum TimerCommand: Sendable {
    /// Send `action` (the reactor's own `Action`, type-erased in the effect) after `delay`, under `name`.
    case schedule(name: String, delay: Duration, action: any Sendable)
    /// Forget the timer named `name`.
    case cancel(name: String)

    /// The timer's name.
    public var name: String {
        switch self {
        case .schedule(let name, _, _), .cancel(let name): name
        }
    }
}

/// A timer command as the host receives it: the action typed, and the seq of the action whose effect asked.
public enum TimerRequest<Action: Sendable>: Sendable {
    case schedule(name: String, delay: Duration, action: Action)
    case cancel(name: String)
}

/// What keeps a hosted runtime's timers (a hosted session): it receives the `schedule` / `cancelTimer` effects
/// with the seq of the action whose effect asked (``ReactorRuntime/setTimerHost(_:)``). Held weakly by the runtime,
/// so a runtime needs no allocation of its own to know it.
public protocol ReactorTimerHost<Action>: AnyObject, Sendable {
    associatedtype Action: Sendable
    func handleTimer(_ request: TimerRequest<Action>, seq: UInt64?)
}

/// Why a timer command could not be handed to a host.
public struct TimerCommandError: Error, CustomStringConvertible {
    public let description: String
}
