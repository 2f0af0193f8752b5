/// An incremental parser of `text/event-stream` bodies exactly per the WHATWG HTML standard ("Parsing an event
/// stream" and "Interpreting an event stream"): bytes in, events out, limits chosen by the caller.
///
/// - The stream is UTF-8; one leading byte order mark is skipped; invalid sequences become U+FFFD.
/// - Lines end with CRLF, LF or CR; a CR at the end of one chunk and an LF at the start of the next are one line end.
/// - A line starting with `:` is a comment. A line without `:` is a field with an empty value. One space after
///   the colon is stripped. Field names are compared exactly (`Data` is not `data`).
/// - `data` appends its value and an LF to the data buffer; `event` sets the type; `id` sets the last event ID
///   buffer unless the value holds U+0000 (an empty `id` resets it); `retry` sets ``reconnectionTime`` only when
///   the value is all ASCII digits. Other fields are ignored.
/// - A blank line dispatches: ``lastEventID`` takes the buffer's value; then, unless the data buffer is empty, an
///   event of that type (default `message`) is returned with the data minus its last LF.
/// - The end of the stream discards an event that no blank line finished (the caller drops the parser).
///
/// `parse` returns how many bytes it consumed and one step: an event (call again with the rest), "need more"
/// (every byte was consumed; a partial line is kept inside the parser), or a rejection once a line or an event
/// outgrows ``Limits``; a rejected parser stays rejected. Each step is reported at the same stream offset however
/// the input is split: an event right after the line end that dispatched it (a CR, without waiting for an LF),
/// a long line at its first byte past the limit.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// var rest = chunk[...]
/// while case (let consumed, .event(let event)) = rest.withUnsafeBytes({ parser.parse($0) }) {
///     handle(event)
///     rest = rest.dropFirst(consumed)
/// }
/// ```
public struct ServerSentEventParser: Sendable {
    /// Bounds on what one connection may make the parser hold.
    public struct Limits: Sendable, Equatable {
        /// The longest line, in bytes without its line end.
        public var maxLineBytes: Int
        /// The largest data buffer of one event, in bytes (each `data` line counts with its LF).
        public var maxEventBytes: Int

        /// Limits of `maxLineBytes` and `maxEventBytes`; the defaults fit states of several MiB.
        public init(maxLineBytes: Int = 16 << 20, maxEventBytes: Int = 16 << 20) {
            self.maxLineBytes = maxLineBytes
            self.maxEventBytes = maxEventBytes
        }
    }

    /// Why the parser stopped.
    public enum Rejection: Error, Sendable, Equatable {
        /// A line grew past ``Limits/maxLineBytes``.
        case lineTooLong(limit: Int)
        /// An event's data grew past ``Limits/maxEventBytes``.
        case eventTooLarge(limit: Int)
    }

    /// What one call to ``parse(_:)`` found.
    public enum Step: Sendable, Equatable {
        /// An event was dispatched; the bytes after `consumed` are still to be parsed.
        case event(ServerSentEvent)
        /// Every byte was consumed without completing an event.
        case needMore
        /// A limit was exceeded; nothing more will be parsed.
        case rejected(Rejection)
    }

    /// The limits this parser enforces.
    public let limits: Limits
    /// The event source's last event ID: the caller's seed until the first dispatch, then the `id` buffer at
    /// the latest blank line (also one that dispatched no event). Send it back as `Last-Event-ID` when not empty.
    public private(set) var lastEventID: String
    /// The reconnection time from the latest valid `retry` field, nil while there was none.
    public private(set) var reconnectionTime: Duration?

    private var line: [UInt8] = []
    private var dataBuffer: [UInt8] = []
    private var eventType = ""
    private var lastEventIDBuffer = ""
    /// True until the first line is complete: only the stream's first bytes may be a byte order mark.
    private var atStreamStart = true
    /// The last line ended with CR: an LF right after it belongs to the same line end.
    private var afterCR = false
    private var rejection: Rejection?

    /// A parser for a new stream; `lastEventID` seeds ``lastEventID`` (the event source's value so far).
    public init(limits: Limits = Limits(), lastEventID: String = "") {
        self.limits = limits
        self.lastEventID = lastEventID
    }

    /// Parses from the start of `bytes`; see the type's documentation for the contract.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> (consumed: Int, step: Step) {
        if let rejection { return (0, .rejected(rejection)) }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if afterCR {
                afterCR = false
                if byte == .lf {
                    index += 1
                    continue
                }
            }
            if byte == .lf || byte == .cr {
                index += 1
                afterCR = byte == .cr
                switch endLine() {
                case .needMore: continue
                case let step: return (index, step)
                }
            }
            // Copy the run of line bytes at once, bounded by the limit.
            var end = index
            while end < bytes.count, bytes[end] != .lf, bytes[end] != .cr { end += 1 }
            guard line.count + (end - index) <= limits.maxLineBytes else {
                // Consumed through the first byte past the limit, wherever the input was split.
                return (
                    index + (limits.maxLineBytes - line.count) + 1, reject(.lineTooLong(limit: limits.maxLineBytes))
                )
            }
            line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
            index = end
        }
        return (index, .needMore)
    }

    /// Interprets the completed line; `.needMore` unless it dispatched an event or broke a limit.
    private mutating func endLine() -> Step {
        defer { line.removeAll(keepingCapacity: line.capacity <= 4096) }
        if atStreamStart {
            atStreamStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        guard let first = line.first else { return dispatch() }
        if first == .colon { return .needMore }
        let colon = line.firstIndex(of: .colon)
        let name = line[..<(colon ?? line.endIndex)]
        var value = colon.map { line[(line.index(after: $0))...] } ?? []
        if value.first == .space { value = value.dropFirst() }
        return interpret(name: name, value: value)
    }

    /// Applies one field; unknown names are ignored.
    private mutating func interpret(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>) -> Step {
        switch String(decoding: name, as: UTF8.self) {
        case "data":
            guard dataBuffer.count + value.count + 1 <= limits.maxEventBytes else {
                return reject(.eventTooLarge(limit: limits.maxEventBytes))
            }
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(.lf)
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            if let milliseconds = Self.digits(value) { reconnectionTime = .milliseconds(milliseconds) }
        default:
            break
        }
        return .needMore
    }

    /// The blank line: the last event ID takes the buffer's value, then an event unless the data is empty.
    private mutating func dispatch() -> Step {
        lastEventID = lastEventIDBuffer
        defer {
            dataBuffer.removeAll(keepingCapacity: dataBuffer.capacity <= 4096)
            eventType = ""
        }
        guard !dataBuffer.isEmpty else { return .needMore }
        let data = dataBuffer.last == .lf ? dataBuffer.dropLast() : dataBuffer[...]
        return .event(
            ServerSentEvent(
                type: eventType.isEmpty ? "message" : eventType,
                data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID))
    }

    private mutating func reject(_ reason: Rejection) -> Step {
        rejection = reason
        line = []
        dataBuffer = []
        return .rejected(reason)
    }

    /// Base-ten ASCII digits as an integer (saturating), or nil when empty or anything else is there.
    static func digits(_ value: ArraySlice<UInt8>) -> Int64? {
        guard !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        var result: Int64 = 0
        for digit in value {
            let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return .max }
            result = sum
        }
        return result
    }
}

extension UInt8 {
    static let lf = UInt8(ascii: "\n")
    static let cr = UInt8(ascii: "\r")
    static let colon = UInt8(ascii: ":")
    static let space = UInt8(ascii: " ")
}
