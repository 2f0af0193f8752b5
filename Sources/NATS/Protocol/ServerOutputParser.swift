#if canImport(Glibc)
    import Glibc
#endif

/// An incremental parser for what a NATS server sends (the client protocol: `INFO`, `MSG`, `HMSG`,
/// `PING`, `PONG`, `+OK`, `-ERR`), pure: bytes in, steps out, no descriptors.
///
/// The contract is picohttpparser's. Each call returns how many bytes it consumed and a step:
/// an operation (whose ranges point into the buffer just passed), `needMore`, or a rejection.
/// Nothing is consumed until a whole operation is present; the caller keeps the unconsumed bytes
/// at the front of its buffer and calls again with more appended. The parser remembers how far it
/// has searched for the end of the control line and, once that line is parsed, what it announced,
/// so no byte is examined twice however the input is split. Limits come from the caller.
///
/// ```swift
/// var parser = ServerOutputParser(limits: NATSParserLimits())
/// let (consumed, step) = buffer.withUnsafeBufferPointer { parser.parse($0) }
/// if case .operation(.message(let frame)) = step { deliver(buffer[frame.payload]) }
/// buffer.removeFirst(consumed)
/// ```
public struct ServerOutputParser: Sendable {
    /// What one call produced.
    public enum Step: Sendable, Equatable {
        /// No complete operation yet: call again with more bytes (nothing was consumed).
        case needMore
        /// One complete operation.
        case operation(ServerOperation)
        /// The input breaks the protocol; the connection must be closed.
        case rejected(NATSProtocolViolation)
    }

    /// The limits in force; the connection raises `maxPayloadBytes` to the server's `max_payload`.
    public var limits: NATSParserLimits
    /// How many bytes of the current control line have been searched for its LF.
    var scanned = 0
    /// A message whose control line is parsed, waiting for the rest of its bytes.
    var awaiting: (frame: MessageFrame, end: Int)?

    /// A parser enforcing `limits`.
    public init(limits: NATSParserLimits = NATSParserLimits()) {
        self.limits = limits
    }

    /// Parses the next operation at the start of `buffer`; `consumed` bytes must be dropped by the caller.
    public mutating func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> (consumed: Int, step: Step) {
        if let (frame, end) = awaiting {
            guard buffer.count >= end else { return (0, .needMore) }
            awaiting = nil
            guard buffer[end - 2] == .cr, buffer[end - 1] == .lf else {
                return (
                    0,
                    .rejected(NATSProtocolViolation(.missingPayloadTerminator, "the payload is not followed by CRLF"))
                )
            }
            return (end, .operation(.message(frame)))
        }
        guard let base = buffer.baseAddress, scanned < buffer.count else {
            return lineIncomplete(length: buffer.count)
        }
        guard let found = memchr(base + scanned, Int32(UInt8.lf), buffer.count - scanned) else {
            scanned = buffer.count
            return lineIncomplete(length: buffer.count)
        }
        let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        scanned = 0
        var lineEnd = newline
        if lineEnd > 0 && buffer[lineEnd - 1] == .cr { lineEnd -= 1 }
        guard lineEnd <= limits.maxControlLineBytes else { return (0, .rejected(lineTooLong())) }
        return parseLine(buffer, lineEnd: lineEnd, next: newline + 1)
    }

    /// The verdict while no LF has been found: the same length rule as for a complete line (the CR
    /// of a CRLF may be the last byte so far), so where the input is split never changes the outcome.
    private func lineIncomplete(length: Int) -> (consumed: Int, step: Step) {
        length > limits.maxControlLineBytes + 1 ? (0, .rejected(lineTooLong())) : (0, .needMore)
    }

    private func lineTooLong() -> NATSProtocolViolation {
        NATSProtocolViolation(.controlLineTooLong, "a control line is longer than \(limits.maxControlLineBytes) bytes")
    }

    /// Dispatches on the operation name (case-insensitive, as the protocol says).
    private mutating func parseLine(_ buffer: UnsafeBufferPointer<UInt8>, lineEnd: Int, next: Int) -> (
        consumed: Int, step: Step
    ) {
        var nameEnd = 0
        while nameEnd < lineEnd && !buffer[nameEnd].isBlank { nameEnd += 1 }
        let name = UnsafeBufferPointer(rebasing: buffer[0..<nameEnd])
        var restStart = nameEnd
        while restStart < lineEnd && buffer[restStart].isBlank { restStart += 1 }
        let rest = restStart..<lineEnd
        if name.equalsUppercased("MSG") {
            return parseMessage(buffer, arguments: rest, next: next, withHeaders: false)
        } else if name.equalsUppercased("HMSG") {
            return parseMessage(buffer, arguments: rest, next: next, withHeaders: true)
        } else if name.equalsUppercased("PING") || name.equalsUppercased("PONG") || name.equalsUppercased("+OK") {
            guard rest.isEmpty else {
                return (
                    0,
                    .rejected(
                        NATSProtocolViolation(
                            .malformedArguments, "\(String(decoding: name, as: UTF8.self)) takes no arguments"))
                )
            }
            let operation: ServerOperation =
                name.equalsUppercased("PING") ? .ping : name.equalsUppercased("PONG") ? .pong : .ok
            return (next, .operation(operation))
        } else if name.equalsUppercased("INFO") {
            guard !rest.isEmpty else {
                return (0, .rejected(NATSProtocolViolation(.malformedArguments, "INFO without a JSON object")))
            }
            return (next, .operation(.info(json: trimmingTrailingBlanks(buffer, rest))))
        } else if name.equalsUppercased("-ERR") {
            var text = trimmingTrailingBlanks(buffer, rest)
            if text.count >= 2 && buffer[text.lowerBound] == .quote && buffer[text.upperBound - 1] == .quote {
                text = text.lowerBound + 1..<text.upperBound - 1
            }
            return (next, .operation(.error(message: text)))
        }
        return (0, .rejected(NATSProtocolViolation(.unknownOperation, "unknown operation \(printable(name))")))
    }

    private func trimmingTrailingBlanks(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var end = range.upperBound
        while end > range.lowerBound && buffer[end - 1].isBlank { end -= 1 }
        return range.lowerBound..<end
    }

    /// At most 16 bytes of an unknown operation name, with non-printable bytes escaped.
    private func printable(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        bytes.prefix(16).map { $0 >= 0x21 && $0 < 0x7F ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }
            .joined()
    }
}

extension UInt8 {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let quote = UInt8(ascii: "'")

    /// A space or a tab: what separates protocol arguments.
    @inline(__always)
    var isBlank: Bool { self == .space || self == .tab }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes, upper-cased (ASCII), are exactly `literal` (which is upper case).
    func equalsUppercased(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for index in 0..<count {
            let byte = self[index]
            let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
            if upper != expected[index] { return false }
        }
        return true
    }
}
