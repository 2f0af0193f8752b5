/// Why the runtime refused or could not complete a request.
public enum ReactorError: Error, Sendable, Equatable {
    /// The runtime was stopped; it takes no more actions.
    case stopped
    /// A middleware refused the action before `mutate`.
    case rejected(ActionRejection)
    /// A middleware's `vet` refused a state the action produced (or a forced state): that state was
    /// dropped and the version did not change; the action's other mutations, if any, still applied.
    case stateRefused(ActionRejection)
    /// `forceState` was called while stub mode is off.
    case stubDisabled
    /// The reactor is busy and `limit` items already wait for it (the runtime's `queueLimit`): the action was
    /// not taken (no seq); send it again once the reactor has caught up.
    case busy(limit: Int)
}

/// A middleware's reason for refusing an action or a state, shaped like an API error (`code` is snake_case).
public struct ActionRejection: Error, Sendable, Equatable {
    /// A stable snake_case identifier, e.g. `rate_limited`.
    public var code: String
    /// A sentence for the person who sent the action.
    public var message: String

    /// Describes a rejection.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

extension ActionRejection: CustomStringConvertible {
    /// `code: message`, for logs.
    public var description: String { "\(code): \(message)" }
}

extension ReactorError: CustomStringConvertible {
    /// A sentence saying what went wrong, for logs and API messages.
    public var description: String {
        switch self {
        case .stopped: "the reactor is stopped and takes no more actions"
        case .rejected(let rejection): "the action was rejected (\(rejection))"
        case .stateRefused(let rejection): "a state the action produced was refused (\(rejection))"
        case .stubDisabled: "a state can only be forced while stub mode is enabled"
        case .busy(let limit): "the reactor is busy and \(limit) items already wait for it; the action was not taken"
        }
    }
}
