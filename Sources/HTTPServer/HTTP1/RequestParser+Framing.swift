extension RequestParser {
    /// The request body's length from its framing fields (RFC 9112 §6): nil for chunked, 0 when it has
    /// none. Both framings at once, or a transfer coding other than a final `chunked`, is refused.
    @inline(__always)
    static func bodyLength(
        _ fields: FieldLines, in head: UnsafeBufferPointer<UInt8>, version: HTTPVersion, limits: HTTPParserLimits
    ) throws(HTTPRejection) -> Int? {
        if fields.codingCount > 0 {
            // RFC 9112 §6.1-6.3: both framings at once is a smuggling vector; refuse.
            if fields.contentLength != nil {
                throw HTTPRejection(.conflictingFraming, "both Content-Length and Transfer-Encoding")
            }
            if version.minor == 0 {
                throw HTTPRejection(.invalidTransferEncoding, "Transfer-Encoding in an HTTP/1.0 request")
            }
            if !fields.lastCodingIsChunked || fields.chunkedCount > 1 {
                throw HTTPRejection(.invalidTransferEncoding, "chunked must be the final transfer coding, exactly once")
            }
            if fields.codingCount > 1 {
                let first = String(decoding: UnsafeBufferPointer(rebasing: head[fields.firstCoding]), as: UTF8.self)
                    .lowercased()
                throw HTTPRejection(.unsupportedTransferCoding, "transfer coding \(first) is not implemented")
            }
            return nil
        }
        let length = fields.contentLength ?? 0
        if length > limits.maxBodyBytes {
            throw HTTPRejection(.bodyTooLarge, "the body (\(length) bytes) is larger than \(limits.maxBodyBytes) bytes")
        }
        return length
    }

    /// A `Content-Length` value: 1-18 decimal digits (so it never overflows), or nil.
    static func parseLength(_ text: String) -> Int? {
        parseLength(text.utf8)
    }

    /// A `Content-Length` value from bytes: 1-18 decimal digits, or nil.
    static func parseLength(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for byte in digits {
            guard let digit = PercentDecoding.decimalDigit(byte) else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}

extension PercentDecoding {
    /// The value of one decimal digit, or nil.
    @inline(__always)
    static func decimalDigit(_ byte: UInt8) -> UInt8? {
        byte &- UInt8(ascii: "0") < 10 ? byte &- UInt8(ascii: "0") : nil
    }
}
