/// `MSG <subject> <sid> [reply-to] <#bytes>` and `HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>`.
extension ServerOutputParser {
    mutating func parseMessage(
        _ buffer: UnsafeBufferPointer<UInt8>, arguments: Range<Int>, next: Int, withHeaders: Bool
    ) -> (consumed: Int, step: Step) {
        let operation = withHeaders ? "HMSG" : "MSG"
        var fields: [Range<Int>] = []
        var index = arguments.lowerBound
        while index < arguments.upperBound {
            let start = index
            while index < arguments.upperBound && !buffer[index].isBlank { index += 1 }
            fields.append(start..<index)
            guard fields.count <= 5 else { break }
            while index < arguments.upperBound && buffer[index].isBlank { index += 1 }
        }
        let minimum = withHeaders ? 4 : 3
        guard fields.count == minimum || fields.count == minimum + 1 else {
            return (0, malformed("\(operation) needs \(minimum) or \(minimum + 1) arguments"))
        }
        guard let sid = decimal(buffer, fields[1]).map(UInt64.init) else {
            return (0, malformed("\(operation) has a subscription id that is not a number"))
        }
        let replyTo = fields.count == minimum + 1 ? fields[2] : nil
        guard let total = decimal(buffer, fields[fields.count - 1]) else {
            return (0, malformed("\(operation) has a size that is not a number"))
        }
        var headerBytes = 0
        if withHeaders {
            guard let size = decimal(buffer, fields[fields.count - 2]) else {
                return (0, malformed("HMSG has a header size that is not a number"))
            }
            guard size <= total else {
                return (0, malformed("HMSG announces \(size) header bytes in a message of \(total) bytes"))
            }
            headerBytes = size
        }
        guard total <= limits.maxPayloadBytes else {
            return (
                0,
                .rejected(
                    NATSProtocolViolation(
                        .payloadTooLarge, "a message of \(total) bytes exceeds the limit of \(limits.maxPayloadBytes)"))
            )
        }
        let frame = MessageFrame(
            subject: fields[0], sid: sid, replyTo: replyTo,
            headerBlock: withHeaders ? next..<next + headerBytes : nil,
            payload: next + headerBytes..<next + total)
        awaiting = (frame, next + total + 2)
        return parse(buffer)
    }

    private func malformed(_ message: String) -> Step {
        .rejected(NATSProtocolViolation(.malformedArguments, message))
    }

    /// A decimal number of at most 18 digits (so it cannot overflow), or nil.
    private func decimal(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value = 0
        for index in range {
            let digit = buffer[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}
