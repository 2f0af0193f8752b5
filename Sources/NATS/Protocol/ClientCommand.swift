/// Encodes what a client sends (`CONNECT`, `PUB`, `HPUB`, `SUB`, `UNSUB`, `PING`, `PONG`), appending
/// to a caller's buffer so that many commands coalesce into one write. Pure; callers validate
/// subjects first (``ClientCommand/isValidSubject(_:)``).
enum ClientCommand {
    /// `CONNECT {…}\r\n`.
    static func connect(_ json: [UInt8], into buffer: inout [UInt8]) {
        buffer += Array("CONNECT ".utf8)
        buffer += json
        buffer += [.cr, .lf]
    }

    /// `PUB subject [reply] size\r\npayload\r\n`, or `HPUB subject [reply] hsize tsize\r\nheaders payload\r\n`
    /// when `headers` (an encoded block) is given.
    static func publish(
        subject: String, replyTo: String?, headers: [UInt8]?, payload: some Collection<UInt8>,
        into buffer: inout [UInt8]
    ) {
        buffer.reserveCapacity(
            buffer.count + subject.utf8.count + (replyTo?.utf8.count ?? 0) + (headers?.count ?? 0) + payload.count + 32)
        buffer += headers == nil ? Array("PUB ".utf8) : Array("HPUB ".utf8)
        buffer += subject.utf8
        if let replyTo {
            buffer.append(.space)
            buffer += replyTo.utf8
        }
        buffer.append(.space)
        if let headers {
            appendDecimal(headers.count, to: &buffer)
            buffer.append(.space)
            appendDecimal(headers.count + payload.count, to: &buffer)
            buffer += [.cr, .lf]
            buffer += headers
        } else {
            appendDecimal(payload.count, to: &buffer)
            buffer += [.cr, .lf]
        }
        buffer += payload
        buffer += [.cr, .lf]
    }

    /// `SUB subject [queue] sid\r\n`.
    static func subscribe(subject: String, queue: String?, sid: UInt64, into buffer: inout [UInt8]) {
        buffer += Array("SUB ".utf8)
        buffer += subject.utf8
        if let queue {
            buffer.append(.space)
            buffer += queue.utf8
        }
        buffer.append(.space)
        appendDecimal(Int(sid), to: &buffer)
        buffer += [.cr, .lf]
    }

    /// `UNSUB sid\r\n`.
    static func unsubscribe(sid: UInt64, into buffer: inout [UInt8]) {
        buffer += Array("UNSUB ".utf8)
        appendDecimal(Int(sid), to: &buffer)
        buffer += [.cr, .lf]
    }

    /// `PING\r\n`.
    static func ping(into buffer: inout [UInt8]) { buffer += Array("PING\r\n".utf8) }

    /// `PONG\r\n`.
    static func pong(into buffer: inout [UInt8]) { buffer += Array("PONG\r\n".utf8) }

    /// Bytes a `PUB`/`HPUB` of this message will carry (what `max_payload` limits).
    static func messageSize(headers: [UInt8]?, payload: Int) -> Int { (headers?.count ?? 0) + payload }

    /// Whether `subject` can be sent: non-empty, no blanks or control bytes, no empty tokens.
    static func isValidSubject(_ subject: String) -> Bool {
        let bytes = subject.utf8
        guard !bytes.isEmpty, bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: ".") else { return false }
        var previous: UInt8 = 0
        for byte in bytes {
            if byte <= 0x20 || byte == 0x7F { return false }
            if byte == UInt8(ascii: ".") && previous == UInt8(ascii: ".") { return false }
            previous = byte
        }
        return true
    }

    /// Appends a non-negative number in decimal without making a String.
    static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        precondition(value >= 0)
        if value < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while rest > 0 {
                raw[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            buffer += raw[(20 - count)...]
        }
    }
}
