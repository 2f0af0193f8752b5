/// One operation the server sent, as the parser found it. Every range points into the buffer that
/// was passed to the ``ServerOutputParser/parse(_:)`` call that returned it; nothing is copied, so
/// the caller reads what it needs before dropping the consumed bytes.
public enum ServerOperation: Sendable, Equatable {
    /// `INFO {…}`: the range of the JSON object.
    case info(json: Range<Int>)
    /// `MSG` or `HMSG`: a delivered message.
    case message(MessageFrame)
    /// `PING`: the server wants a `PONG`.
    case ping
    /// `PONG`: the answer to our `PING`.
    case pong
    /// `+OK` (only sent in verbose mode, which this client never asks for).
    case ok
    /// `-ERR 'text'`: the range of the text, without its quotes.
    case error(message: Range<Int>)
}

/// Where the parts of one `MSG`/`HMSG` lie in the parser's input.
public struct MessageFrame: Sendable, Equatable {
    /// The subject the message was published to.
    public var subject: Range<Int>
    /// The subscription it was delivered for (our own number, echoed back).
    public var sid: UInt64
    /// The subject to reply to, if the publisher gave one.
    public var replyTo: Range<Int>?
    /// The header block (`NATS/1.0…\r\n\r\n`) of an `HMSG`; nil for `MSG`. Its content is checked
    /// separately by ``NATSHeaders/parse(_:)``: a malformed block from some other publisher must cost
    /// that one message, not the connection.
    public var headerBlock: Range<Int>?
    /// The payload, without the CRLF that follows it.
    public var payload: Range<Int>

    /// A frame from its parts.
    public init(subject: Range<Int>, sid: UInt64, replyTo: Range<Int>?, headerBlock: Range<Int>?, payload: Range<Int>) {
        self.subject = subject
        self.sid = sid
        self.replyTo = replyTo
        self.headerBlock = headerBlock
        self.payload = payload
    }
}
