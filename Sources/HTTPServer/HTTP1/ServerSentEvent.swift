/// One Server-Sent Event (WHATWG HTML §9.2): `event`, `id`, `data` (split into one `data:` line
/// per line), `retry` in milliseconds, and an optional comment line sent before the fields.
public struct ServerSentEvent: Sendable, Equatable {
    /// The `event:` type; nil sends none (clients treat it as `message`).
    public var event: String?
    /// The `id:` a reconnecting client sends back as `Last-Event-ID`.
    public var id: String?
    /// The payload; each line becomes its own `data:` line.
    public var data: String
    /// The `retry:` reconnection delay in milliseconds.
    public var retry: Int?
    /// A comment line (`: …`) sent before the fields; ignored by clients.
    public var comment: String?

    /// An event from its fields.
    public init(event: String? = nil, id: String? = nil, data: String = "", retry: Int? = nil, comment: String? = nil) {
        self.event = event
        self.id = id
        self.data = data
        self.retry = retry
        self.comment = comment
    }

    /// The wire form, ending with the blank line that dispatches the event.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.utf8.count + 32)
        if let comment {
            for line in Self.lines(comment) {
                out.append(contentsOf: ": ".utf8)
                out.append(contentsOf: line)
                out.append(.lf)
            }
        }
        if let event { Self.appendField("event", Self.singleLine(event), to: &out) }
        if let id { Self.appendField("id", Self.singleLine(id).filter { $0 != 0 }, to: &out) }
        if let retry, retry >= 0 { Self.appendField("retry", Array(String(retry).utf8), to: &out) }
        // A comment-only event carries no data field; every other event has at least one data line.
        if !(data.isEmpty && comment != nil && event == nil && id == nil && retry == nil) {
            for line in Self.lines(data) { Self.appendField("data", line, to: &out) }
        }
        out.append(.lf)
        return out
    }

    private static func appendField(_ name: String, _ value: some Collection<UInt8>, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(.colon)
        // One space after the colon, as the parser strips exactly one.
        out.append(.space)
        out.append(contentsOf: value)
        out.append(.lf)
    }

    /// `text` split at CRLF, CR and LF, as an event-stream parser would split it.
    static func lines(_ text: String) -> [ArraySlice<UInt8>] {
        let bytes = Array(text.utf8)
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == .lf || byte == .cr {
                lines.append(bytes[start..<index])
                if byte == .cr && index + 1 < bytes.count && bytes[index + 1] == .lf { index += 1 }
                start = index + 1
            }
            index += 1
        }
        lines.append(bytes[start..<bytes.count])
        return lines
    }

    /// A field that must stay on one line (`event`, `id`): line breaks become spaces.
    private static func singleLine(_ text: String) -> [UInt8] {
        text.utf8.map { $0 == .lf || $0 == .cr ? .space : $0 }
    }
}

/// An event encoded once, to be sent to many streams without re-encoding or copying.
public struct EncodedServerSentEvent: Sendable {
    /// The wire bytes.
    public let bytes: [UInt8]
    /// The storage position whose records the event shows (the server's ``OutputBarrier`` holds it
    /// until that one is durable); nil for everything appended when it is queued.
    public let position: UInt64?

    /// Encodes `event`.
    public init(_ event: ServerSentEvent, position: UInt64? = nil) {
        bytes = event.bytes
        self.position = position
    }

    /// Wraps bytes that are already in event-stream format (for example a `: comment\n\n`).
    public init(bytes: [UInt8], position: UInt64? = nil) {
        self.bytes = bytes
        self.position = position
    }

    /// The keep-alive comment sent on quiet streams.
    static let keepAlive = EncodedServerSentEvent(bytes: Array(": keep-alive\n\n".utf8))
}
