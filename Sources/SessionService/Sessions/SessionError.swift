import JSONCodec
import Reactors

/// Why a session could not do what a request asked, in the session's own terms; the service turns
/// each case into an HTTP answer in one place (`APIError(_:)`).
public enum SessionError: Error, Sendable {
    /// No session has this id.
    case unknown(id: String)
    /// The session was deleted (or expired) while the request was in progress.
    case ended
    /// The session left memory between the lookup and the request's use of it; the service retries
    /// once on the session loaded back.
    case passivated
    /// The session is stored but cannot be served (quarantined), and why.
    case unavailable(id: String, reason: String)
    /// Nothing can be stored right now (and why): changes are refused, reads still work.
    case storageUnavailable(String)
    /// The session is stored and not damaged, but could not be read back right now (and why, if known).
    case storageUnreadable(id: String, reason: String?)
    /// The action body does not decode as an action of the session's reactor.
    case invalidAction(ActionDecodingError, reactor: String)
    /// The action is one only the reactor's own timers send (its `acceptsFromOutside(_:)` is false).
    case internalAction(type: String, reactor: String)
    /// The action, as it decoded, is larger than one stored record holds.
    case actionTooLarge(bytes: Int, limit: Int)
    /// A forced state does not decode as the reactor's state.
    case invalidState(reactor: String, detail: String)
    /// The runtime, or a middleware of it, refused the action or the state it produced
    /// (`state_too_large`, `state_not_encodable`, …).
    case refused(ActionRejection)
    /// A state was to be forced, but stub mode was switched off after the service checked it.
    case stubDisabled
    /// Anything else: a bug, whose cause is in the message.
    case failed(String)

    /// The session's view of a runtime refusal: a stopped reactor is a session that just ended; a forced
    /// state the runtime refuses because stub mode is off lost a race with `PUT …/stub false`.
    @usableFromInline
    static func reactor(_ error: ReactorError) -> SessionError {
        switch error {
        case .rejected(let rejection), .stateRefused(let rejection):
            return .refused(rejection)
        case .stopped:
            return .ended
        case .stubDisabled:
            return .stubDisabled
        }
    }
}
