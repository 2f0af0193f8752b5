import JSONCodec

/// One thing a session's event stream reports.
public enum SessionEvent<State: Sendable>: Sendable {
    /// A new state (`event: state`, `id:` = version): the current one first, then each new one in order.
    case state(VersionedState<State>)
    /// A `@Pulse` property was assigned (`event: pulse`), right after the state of the version that assigned it.
    case pulse(PulseEvent)
    /// The connection changed; the last event of a sequence is always `.connection(.ended(_))`.
    case connection(ConnectionState)
}

/// An assignment of a `@Pulse` property: reaches the client every time, even with an equal value.
public struct PulseEvent: Sendable, Hashable {
    /// The property's name (`alert` for `@Pulse var alert`).
    public var name: String
    /// The assigned value, as JSON.
    public var value: JSONValue
    /// How many times the property has been assigned in the session.
    public var count: UInt64

    /// A pulse from its parts.
    public init(name: String, value: JSONValue, count: UInt64) {
        self.name = name
        self.value = value
        self.count = count
    }

    /// The value decoded as `Value` (e.g. `String?.self` for `@Pulse var alert: String?`).
    public func value<Value: Decodable>(as type: Value.Type) throws(ReactorClientError) -> Value {
        try APIResponse.decode(Value.self, from: value, "pulse \(name)'s value")
    }

    /// From `{"name", "value", "count"}` (plus `"session"` on a multiplexed stream).
    init(_ data: JSONValue) throws(ReactorClientError) {
        name = try APIResponse.string(data, "name")
        value = try APIResponse.member(data, "value")
        count = try APIResponse.integer(data, "count")
    }
}

/// How the events of a single-session stream read, shared by ``SessionEvents`` and the façade: it holds the state
/// as JSON, so that an `event: patch` (`?delta=json-patch`) applies to it and is delivered as the whole state.
/// One reader per iteration, used by its task alone.
final class SessionEventReader<State: Decodable & Sendable> {
    /// The state (or selected value) as the events of the current connection built it, and its version.
    private var document: (version: UInt64, value: JSONValue)?
    /// The id of the last state read: where a stream whose patch did not apply resumes, for a whole state.
    private var resumeID: String

    /// A reader of a stream that resumes after `lastEventID` (empty: from the current state).
    init(lastEventID: String) {
        resumeID = lastEventID
    }

    /// A new connection starts with a whole state: patches apply to what it sends, not to the last one's.
    func connecting() {
        document = nil
    }

    /// The verdict on `event` and, for a state, patch or pulse, the element to deliver.
    func read(_ event: ServerSentEvent) -> (EventVerdict, SessionEvent<State>?) {
        do throws(ReactorClientError) {
            switch event.type {
            case "state":
                let version = try Self.version(event)
                let value = try APIResponse.parse(event: event)
                let state = try APIResponse.decode(State.self, from: value, "the state of version \(version)")
                (document, resumeID) = ((version, value), event.lastEventID)
                return (.next, .state(VersionedState(version: version, state: state)))
            case "patch":
                let version = try Self.version(event)
                guard let document, version > document.version else {
                    let had = document.map { "version \($0.version)" } ?? "no state"
                    let cause = ReactorClientError.invalidResponse(
                        "a patch to version \(version) came with \(had) to apply it to")
                    return (.resync(cause, lastEventID: resumeID), nil)
                }
                let value: JSONValue
                do {
                    value = try JSONPatch(json: Array(event.data.utf8)).apply(to: document.value)
                } catch {
                    let cause = ReactorClientError.invalidResponse(
                        "the patch to version \(version) does not apply to version \(document.version): \(error)")
                    return (.resync(cause, lastEventID: resumeID), nil)
                }
                let state = try APIResponse.decode(State.self, from: value, "the state of version \(version)")
                (self.document, resumeID) = ((version, value), event.lastEventID)
                return (.next, .state(VersionedState(version: version, state: state)))
            case "pulse":
                return (.next, .pulse(try PulseEvent(try APIResponse.parse(event: event))))
            case "end":
                return (.finish(reason: (try? APIResponse.parse(event: event))?["reason"]?.stringValue ?? "ended"), nil)
            case "error":
                return (.reconnect(SessionEventReading.streamError(event)), nil)
            default:
                // Types a later server may add are not this client's business.
                return (.next, nil)
            }
        } catch {
            return (.fail(error), nil)
        }
    }

    /// The version in a state's or patch's `id:`.
    private static func version(_ event: ServerSentEvent) throws(ReactorClientError) -> UInt64 {
        guard let version = UInt64(event.lastEventID) else {
            throw .invalidResponse("a \(event.type) event's id is not a version: \(event.lastEventID)")
        }
        return version
    }
}

/// What the single-session and multiplexed streams read alike.
enum SessionEventReading {
    /// The `{"code", "message"}` of an `event: error`, read leniently: the stream closes either way.
    static func streamError(_ event: ServerSentEvent) -> ReactorClientError {
        let data = try? APIResponse.parse(event: event)
        return .stream(
            code: ServerErrorCode(rawValue: data?["code"]?.stringValue ?? "unknown"),
            message: data?["message"]?.stringValue ?? event.data)
    }
}
