import HTTPServer
import JSONCodec

/// The words of API.md's event streams, all in one place: which events a stream carries, their `id:`
/// and the JSON of their `data:`. The one-session stream (`GET /sessions/{id}/events`) and the
/// multiplexed one (`GET /events?sessions=…`) both speak through it; sessions know none of it.
///
/// One session: `event: state` (`id:` the version, `data:` the state or the selected value), `event: patch`
/// (`?delta=json-patch`: `id:` the version, `data:` the RFC 6902 patch from the stream's state before), `event: pulse`
/// (`{"name","value","count"}`, no `id:`), `event: end` (`{"reason":"session deleted"}`) and `event: error`
/// (`{"code","message"}`), after which the stream closes. Many sessions: the same events, every `data:`
/// naming its session (`{"session",…}`) and every `id:` the stream's cursor (``StreamCursor``).
enum ServerSentEventVocabulary {
    /// `end`'s reason when the session was deleted (or expired).
    static let sessionDeleted = "session deleted"
    /// `end`'s reason for a session of a multiplexed stream that does not exist.
    static let unknownSession = APIError.Kind.unknownSession.code
    /// `end`'s reason for a session of a multiplexed stream the request may not read.
    static let unauthorized = APIError.Kind.unauthorized.code
    /// `error`'s code for a subscriber whose held pulses passed `sse.pulseBuffer`.
    static let subscriberTooSlow = "subscriber_too_slow"
    /// `error`'s code for a stream opened as its session left memory (reconnecting follows it).
    static let sessionPassivated = APIError.Kind.sessionPassivated.code
    static let sessionPassivatedMessage = "the session left memory as this stream opened; reconnect to follow it"

    /// Every code an `event: error` carries, with what a client does about it (`/openapi.json` lists them).
    static let errorCodes: [(code: String, meaning: String)] = [
        (
            SubscriptionEnd.movedCode,
            "the session runs on another instance now; reconnecting with Last-Event-ID follows it"
        ),
        (sessionPassivated, "the session left memory as the stream opened; reconnecting loads it back"),
        (subscriberTooSlow, "more pulses waited for this subscriber than sse.pulseBuffer; reconnect and read faster"),
        (unauthorized, "the credential that opened the stream lapsed (its token replaced, its JWT past exp)"),
        (
            APIError.Kind.storageUnavailable.code,
            "the session's newest changes are not stored yet (the storage is failing); reconnect later"
        ),
    ]

    // MARK: One session

    /// `event: state`, `id: <version>`, `data: <json>`: a state, whole or selected.
    static func state(version: UInt64, json: [UInt8]) -> [UInt8] {
        var out = EventBytes(capacity: json.count + 40)
        out.field("event: state\nid: ")
        out.decimal(version)
        out.newline()
        out.data(json)
        out.newline()
        return out.bytes
    }

    /// `event: patch`, `id: <version>`, `data: <patch>`: the RFC 6902 patch from the stream's state before.
    static func patch(version: UInt64, json: [UInt8]) -> [UInt8] {
        var out = EventBytes(capacity: json.count + 40)
        out.field("event: patch\nid: ")
        out.decimal(version)
        out.newline()
        out.data(json)
        out.newline()
        return out.bytes
    }

    /// `event: pulse`, `data: {"name","value","count"}`. No `id:`: a pulse does not move the stream's
    /// position, and a client that reconnects is not sent pulses from before (API.md).
    static func pulse(name: String, count: UInt64, value: [UInt8]) -> [UInt8] {
        var data = JSONWriter(capacity: value.count + name.utf8.count + 40)
        data.raw("{\"name\":")
        data.string(name)
        data.raw(",\"value\":")
        data.raw(value)
        data.raw(",\"count\":")
        data.integer(count)
        data.raw("}")
        var out = EventBytes(capacity: data.bytes.count + 20)
        out.field("event: pulse\n")
        out.data(data.bytes)
        out.newline()
        return out.bytes
    }

    /// The last event of a one-session stream that `end` closes.
    static func ending(_ end: SubscriptionEnd) -> ServerSentEvent {
        switch end {
        case .deleted: ServerSentEvent(event: "end", data: #"{"reason":"session deleted"}"#)
        case .unavailable(let code, let message): error(session: nil, code: code, message: message, cursor: nil)
        case .tooSlow(let message): error(session: nil, code: subscriberTooSlow, message: message, cursor: nil)
        }
    }

    // MARK: Many sessions

    /// The head of a multiplexed event, `event: <name>` and `id: <cursor>`: made for each stream, since
    /// the cursor is the stream's own; the shared body follows it (``multiplexedState(session:version:json:)``).
    static func multiplexedHead(_ name: StaticString, cursor: StreamCursor) -> [UInt8] {
        var out = EventBytes(capacity: cursor.list.count + cursor.positions.count * 13 + 24)
        out.field("event: ")
        out.field(name)
        out.field("\nid: ")
        cursor.append(to: &out.bytes)
        out.newline()
        return out.bytes
    }

    /// The body of a multiplexed state, `data: {"session","version","state"}` and the blank line.
    static func multiplexedState(session: String, version: UInt64, json: [UInt8]) -> [UInt8] {
        var data = JSONWriter(capacity: json.count + session.utf8.count + 40)
        data.raw("{\"session\":")
        data.string(session)
        data.raw(",\"version\":")
        data.integer(version)
        data.raw(",\"state\":")
        data.raw(json)
        data.raw("}")
        return body(data.bytes)
    }

    /// The body of a multiplexed patch, `data: {"session","version","patch"}` and the blank line.
    static func multiplexedPatch(session: String, version: UInt64, json: [UInt8]) -> [UInt8] {
        var data = JSONWriter(capacity: json.count + session.utf8.count + 40)
        data.raw("{\"session\":")
        data.string(session)
        data.raw(",\"version\":")
        data.integer(version)
        data.raw(",\"patch\":")
        data.raw(json)
        data.raw("}")
        return body(data.bytes)
    }

    /// The body of a multiplexed pulse, `data: {"session","name","value","count"}` and the blank line.
    static func multiplexedPulse(session: String, name: String, count: UInt64, value: [UInt8]) -> [UInt8] {
        var data = JSONWriter(capacity: value.count + session.utf8.count + name.utf8.count + 50)
        data.raw("{\"session\":")
        data.string(session)
        data.raw(",\"name\":")
        data.string(name)
        data.raw(",\"value\":")
        data.raw(value)
        data.raw(",\"count\":")
        data.integer(count)
        data.raw("}")
        return body(data.bytes)
    }

    /// `event: end` of one session's part: `{"session","reason"}`.
    static func multiplexedEnd(session: String, reason: String, cursor: String) -> ServerSentEvent {
        var data = JSONWriter(capacity: 64)
        data.raw("{\"session\":")
        data.string(session)
        data.raw(",\"reason\":")
        data.string(reason)
        data.raw("}")
        return ServerSentEvent(event: "end", id: cursor, data: String(decoding: data.bytes, as: UTF8.self))
    }

    /// `event: error`: `{"code","message"}`, with `"session"` first when it ends one session's part of a
    /// multiplexed stream; `id:` the cursor on a multiplexed stream.
    static func error(session: String?, code: String, message: String, cursor: String?) -> ServerSentEvent {
        var data = JSONWriter(capacity: 96 + message.utf8.count)
        data.raw("{")
        if let session {
            data.raw("\"session\":")
            data.string(session)
            data.raw(",")
        }
        data.raw("\"code\":")
        data.string(code)
        data.raw(",\"message\":")
        data.string(message)
        data.raw("}")
        return ServerSentEvent(event: "error", id: cursor, data: String(decoding: data.bytes, as: UTF8.self))
    }

    /// `data: <json>` and the blank line that dispatches the event.
    private static func body(_ json: [UInt8]) -> [UInt8] {
        var out = EventBytes(capacity: json.count + 8)
        out.data(json)
        out.newline()
        return out.bytes
    }
}

/// Event-stream bytes built field by field.
private struct EventBytes {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func field(_ text: StaticString) { text.withUTF8Buffer { bytes.append(contentsOf: $0) } }

    mutating func decimal(_ value: UInt64) {
        var writer = JSONWriter(capacity: 20)
        writer.integer(value)
        bytes.append(contentsOf: writer.bytes)
    }

    mutating func newline() { bytes.append(UInt8(ascii: "\n")) }

    /// `data: <json>\n`. JSON has line breaks only between tokens, never inside strings; should it carry
    /// any, each line gets its own `data:` field, which a client joins back with a line feed.
    mutating func data(_ json: [UInt8]) {
        guard json.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
            field("data: ")
            bytes.append(contentsOf: json)
            newline()
            return
        }
        bytes.append(contentsOf: ServerSentEvent(data: String(decoding: json, as: UTF8.self)).bytes.dropLast())
    }
}
