import JSONCodec
import Reactors

/// The one place where what went wrong with a session becomes an HTTP answer: status, code, message.
extension APIError {
    /// The answer to a `SessionError`.
    init(_ error: SessionError) {
        switch error {
        case .unknown(let id):
            self.init(.unknownSession, "no session with id \(JSONWriter.quoted(id)); create one with POST /sessions")
        case .ended:
            self.init(.unknownSession, "the session was deleted while the request was in progress")
        case .passivated:
            self.init(.sessionPassivated, "the session left memory while the request was in progress; retry")
        case .unavailable(let id, let reason):
            self.init(
                .sessionUnavailable,
                "session \(JSONWriter.quoted(id)) cannot be served: \(reason); DELETE it to start over")
        case .storageUnavailable(let reason):
            // Nothing accepted now would survive a restart, so nothing is accepted.
            self.init(
                .storageUnavailable,
                "the journal cannot be written (\(reason)); changes are refused until it can be, reads still work")
        case .storageUnreadable(let id, let reason):
            // It exists and is not damaged: neither a 404 nor a quarantine.
            let why = reason ?? "it was being loaded or changed at the same time"
            self.init(
                .storageUnavailable,
                "session \(JSONWriter.quoted(id)) is stored but cannot be read from the journal right now (\(why)); "
                    + "retry later")
        case .invalidAction(let decoding, let reactor):
            self = Self.action(decoding, reactor: reactor)
        case .internalAction(let type, let reactor):
            self.init(
                .unknownAction,
                "action \(JSONWriter.quoted(type)) of reactor \(JSONWriter.quoted(reactor)) is sent only by the "
                    + "session's own timers; clients cannot send it (GET /reactors lists the actions they can)")
        case .actionTooLarge(let bytes, let limit):
            self.init(
                .actionTooLarge,
                "the action is \(bytes) bytes as it decoded; the journal holds actions of up to \(limit) bytes")
        case .invalidState(let reactor, let detail):
            self.init(
                .invalidState,
                "the body does not decode as the state of reactor \(JSONWriter.quoted(reactor)): \(detail)")
        case .refused(let rejection):
            // The server's own refusals (`state_too_large`, `state_not_encodable`) by their kind, a reactor's
            // middleware's with its own code.
            if let kind = Kind(refusal: rejection) {
                self.init(kind, rejection.message)
            } else {
                self.init(refusedByReactorWith: rejection.code, rejection.message)
            }
        case .stubDisabled:
            // The service checks stub mode first; this is a PUT …/stub false that won the race to the runtime.
            self.init(
                .stubDisabled,
                "states can be forced only in stub mode, and stub mode was switched off while this request was in "
                    + "progress")
        case .failed(let detail):
            self = .internal(detail)
        }
    }

    /// A rejected action body: `invalid_json` (400), `unknown_action` or `invalid_action` (422).
    static func action(_ error: ActionDecodingError, reactor: String) -> APIError {
        switch error {
        case .invalidJSON(let parse):
            return .invalidJSON(parse.message)
        case .notAnObject, .missingType, .typeNotString, .unknownType:
            return APIError(
                .unknownAction,
                "\(error.message) (reactor \(JSONWriter.quoted(reactor)); GET /reactors lists its actions)")
        case .invalidPayload:
            return APIError(.invalidAction, error.message)
        }
    }
}

extension APIError.Kind {
    /// The kind of a refusal by the server's own middleware (``StateLimit``), nil for another's code.
    init?(refusal: ActionRejection) {
        switch refusal.code {
        case Self.stateTooLarge.code: self = .stateTooLarge
        case Self.stateNotEncodable.code: self = .stateNotEncodable
        default: return nil
        }
    }
}

extension Exchange {
    /// Answers with the HTTP form of a session's error.
    func fail(_ error: SessionError) {
        switch error {
        case .storageUnavailable, .storageUnreadable:
            // A refusal because nothing can be stored shows nothing stored: it must not wait for the
            // storage to recover (a held answer would, and the client would learn nothing).
            dependsOn = 0
        default:
            break
        }
        fail(APIError(error))
    }
}
