import JSONCodec
import Reactors

extension APIError {
    /// Maps a rejected action body to `invalid_json` (400), `unknown_action` or `invalid_action` (422).
    @usableFromInline
    static func action(_ error: ActionDecodingError, reactor: String) -> APIError {
        switch error {
        case .invalidJSON(let parse):
            return .invalidJSON(parse.message)
        case .notAnObject, .missingType, .typeNotString, .unknownType:
            return APIError(status: 422, code: "unknown_action", message: "\(error.message) (reactor \(JSONWriter.quoted(reactor)); GET /reactors lists its actions)")
        case .invalidPayload:
            return APIError(status: 422, code: "invalid_action", message: error.message)
        }
    }

    /// Maps a runtime refusal: a stopped reactor is a session that just ended; a middleware's rejection of
    /// the action or of a state it produced (`state_too_large`, `state_not_encodable`) keeps its own code.
    @usableFromInline
    static func reactor(_ error: ReactorError) -> APIError {
        switch error {
        case .rejected(let rejection), .stateRefused(let rejection):
            return APIError(status: 422, code: rejection.code, message: rejection.message)
        case .stopped:
            return .sessionEnded
        default:
            return .internal("\(error)")
        }
    }

    /// The session left memory between the lookup and the request's use of it; the service retries
    /// once on the session loaded back, so clients see this only if that happens twice in a row.
    @usableFromInline
    static let sessionPassivated = APIError(status: 503, code: "session_passivated", message: "the session left memory while the request was in progress; retry")

    /// The journal cannot be written: nothing accepted now would survive a restart, so nothing is accepted.
    @usableFromInline
    static func storageUnavailable(_ reason: String) -> APIError {
        APIError(status: 503, code: "storage_unavailable", message: "the journal cannot be written (\(reason)); changes are refused until it can be, reads still work")
    }

    /// An action whose canonical JSON is larger than one journal record holds: refused before anything changed.
    @usableFromInline
    static func actionTooLarge(_ bytes: Int) -> APIError {
        APIError(status: 413, code: "action_too_large", message: "the action is \(bytes) bytes as it decoded; the journal holds actions of up to \(FileJournal.maxActionBytes) bytes")
    }

    /// A stored session could not be read back (descriptors exhausted, an I/O error): it exists and is
    /// not damaged, so this is neither a 404 nor a quarantine.
    static func storageUnreadable(_ id: String, _ reason: String?) -> APIError {
        APIError(status: 503, code: "storage_unavailable", message: "session \(JSONWriter.quoted(id)) is stored but cannot be read from the journal right now (\(reason ?? "it was being loaded or changed at the same time")); retry later")
    }

    @usableFromInline
    static let sessionEnded = APIError(status: 404, code: "unknown_session", message: "the session was deleted while the request was in progress")
}
