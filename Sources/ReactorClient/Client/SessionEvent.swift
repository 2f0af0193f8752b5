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

/// How one event of a single-session stream reads: shared by ``SessionEvents`` and the façade.
enum SessionEventReading {
    /// The verdict on `event` and, for a state or pulse, the element to deliver.
    static func read<State: Decodable & Sendable>(_ event: ServerSentEvent, as type: State.Type) -> (EventVerdict, SessionEvent<State>?) {
        do throws(ReactorClientError) {
            switch event.type {
            case "state":
                guard let version = UInt64(event.lastEventID) else {
                    throw .invalidResponse("a state event's id is not a version: \(event.lastEventID)")
                }
                let state = try APIResponse.decode(State.self, from: try APIResponse.parse(event: event), "the state of version \(version)")
                return (.next, .state(VersionedState(version: version, state: state)))
            case "pulse":
                return (.next, .pulse(try PulseEvent(try APIResponse.parse(event: event))))
            case "end":
                return (.finish(reason: (try? APIResponse.parse(event: event))?["reason"]?.stringValue ?? "ended"), nil)
            case "error":
                return (.reconnect(streamError(event)), nil)
            default:
                // Types a later server may add are not this client's business.
                return (.next, nil)
            }
        } catch {
            return (.fail(error), nil)
        }
    }

    /// The `{"code", "message"}` of an `event: error`, read leniently: the stream closes either way.
    static func streamError(_ event: ServerSentEvent) -> ReactorClientError {
        let data = try? APIResponse.parse(event: event)
        return .stream(code: ServerErrorCode(rawValue: data?["code"]?.stringValue ?? "unknown"), message: data?["message"]?.stringValue ?? event.data)
    }
}
