extension RequestParser {
    /// Parses a complete head (`head` ends with the empty line, after `fieldLines` field lines) and
    /// sets up body reading; a fixed-length body wholly in `following` is read at once, and
    /// `bodyConsumed` is set to its length.
    mutating func parseCompleteHead(_ head: UnsafeBufferPointer<UInt8>, requestLineEnd: Int, fieldLines: Int, following: UnsafeBufferPointer<UInt8>, bodyConsumed: inout Int) -> Step {
        let line = UnsafeBufferPointer(rebasing: head[0..<requestLineEnd])
        guard let firstSpace = line.firstIndex(of: .space),
            let secondSpace = line[(firstSpace + 1)...].firstIndex(of: .space),
            firstSpace > 0, secondSpace > firstSpace + 1, secondSpace + 1 < line.count
        else {
            return reject(.malformedRequestLine, "the request line is not `METHOD target HTTP/x.y`")
        }
        let methodBytes = UnsafeBufferPointer(rebasing: line[0..<firstSpace])
        let targetBytes = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        let versionBytes = UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])

        guard versionBytes.count == 8, UnsafeBufferPointer(rebasing: versionBytes[0..<5]).equals("HTTP/"), versionBytes[6] == UInt8(ascii: "."),
            let major = PercentDecoding.decimalDigit(versionBytes[5]), let minor = PercentDecoding.decimalDigit(versionBytes[7])
        else {
            if line[(secondSpace + 1)...].contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                return reject(.invalidCharacter, "control character in the request line")
            }
            return reject(.malformedRequestLine, "the request line does not end in HTTP/x.y")
        }
        guard major == 1 else {
            return reject(.unsupportedVersion, "HTTP/\(major).\(minor) is not supported; use HTTP/1.1")
        }
        let version = HTTPVersion(major: 1, minor: Int(minor))
        guard methodBytes.allSatisfy(\.isTokenCharacter) else {
            return reject(.malformedRequestLine, "the method is not a token")
        }
        guard let method = HTTPMethod(bytes: methodBytes) else {
            return reject(.unknownMethod, "method \(String(decoding: methodBytes, as: UTF8.self)) is not implemented")
        }
        for byte in targetBytes where byte <= 0x20 || byte >= 0x7F {
            if byte < 0x20 || byte == 0x7F { return reject(.invalidCharacter, "control character in the request target") }
            return reject(.malformedRequestLine, "the request target contains a byte that must be percent-encoded")
        }
        let target = String(decoding: targetBytes, as: UTF8.self)
        if targetBytes[0] != UInt8(ascii: "/") {
            let lower = target.lowercased()
            let absolute = lower.hasPrefix("http://") || lower.hasPrefix("https://")
            guard absolute || (target == "*" && method == .OPTIONS) else {
                return reject(.malformedRequestLine, "the request target must start with / or be an absolute http URI")
            }
        }

        var spans: [HTTPHeaders.Span] = []
        spans.reserveCapacity(fieldLines)
        var hosts = 0
        var contentLength: Int? = nil
        var transferEncodings: [String] = []
        var connectionClose = false
        var connectionKeepAlive = false
        var expectContinue = false
        var lineStart = requestLineEnd
        // The request line ends in CRLF or LF.
        lineStart += head[lineStart] == .cr ? 2 : 1
        // The field lines are kept as bytes, once; a field's Strings are made only if it is read.
        let fieldsStart = lineStart
        // One pass per field line: the name up to the colon (token bytes), then the value up to the
        // line end (no control bytes). The head ends with an empty line, so every line has its LF.
        // Errors are those of the checks in this order: line folding, colon, whitespace before
        // the colon, the first byte of the name that is not a token byte, the first control byte
        // of the value.
        while true {
            var index = lineStart
            let first = head[index]
            if first == .lf || (first == .cr && head[index + 1] == .lf) { break }
            if first == .space || first == .tab {
                return reject(.obsoleteLineFolding, "obsolete line folding (a field line starting with whitespace)")
            }
            var badNameByte: UInt8? = nil
            while true {
                let byte = head[index]
                if byte.isTokenCharacter {
                    index += 1
                    continue
                }
                if byte == .colon { break }
                if byte == .lf { return reject(.malformedHeader, "a header line has no field name and colon") }
                if badNameByte == nil { badNameByte = byte }
                index += 1
            }
            let colon = index
            if colon == lineStart {
                return reject(.malformedHeader, "a header line has no field name and colon")
            }
            if head[colon - 1] == .space || head[colon - 1] == .tab {
                return reject(.malformedHeader, "whitespace between a field name and the colon")
            }
            if let byte = badNameByte {
                if byte < 0x20 || byte == 0x7F { return reject(.invalidCharacter, "control character in a field name") }
                return reject(.malformedHeader, "a field name contains a character that is not allowed")
            }
            index += 1
            while head[index] == .space || head[index] == .tab { index += 1 }
            let valueStart = index
            while true {
                let byte = head[index]
                if (byte >= 0x20 && byte != 0x7F) || byte == .tab {
                    index += 1
                    continue
                }
                if byte == .lf || (byte == .cr && head[index + 1] == .lf) { break }
                return reject(.invalidCharacter, byte == 0 ? "NUL in a field value" : (byte == .cr ? "bare CR in a field value" : "control character in a field value"))
            }
            let next = head[index] == .lf ? index + 1 : index + 2
            var valueEnd = index
            while valueEnd > valueStart && (head[valueEnd - 1] == .space || head[valueEnd - 1] == .tab) { valueEnd -= 1 }
            let nameBytes = UnsafeBufferPointer(rebasing: head[lineStart..<colon])
            let valueBytes = UnsafeBufferPointer(rebasing: head[valueStart..<valueEnd])
            spans.append(HTTPHeaders.Span(name: (lineStart - fieldsStart)..<(colon - fieldsStart), value: (valueStart - fieldsStart)..<(valueEnd - fieldsStart)))
            lineStart = next

            switch nameBytes.count {
            case 4 where HTTPHeaders.same(nameBytes, "Host"):
                hosts += 1
            case 14 where HTTPHeaders.same(nameBytes, "Content-Length"):
                // The usual single number, read straight from the bytes (splitting a String is
                // Character-based and costs more than the rest of the head).
                if let length = Self.parseLength(valueBytes) {
                    if let earlier = contentLength, earlier != length {
                        return reject(.invalidContentLength, "differing Content-Length values")
                    }
                    contentLength = length
                    continue
                }
                let value = String(decoding: valueBytes, as: UTF8.self)
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let length = Self.parseLength(item.trimmingSpaces) else {
                        return reject(.invalidContentLength, "Content-Length \"\(value)\" is not a non-negative decimal number")
                    }
                    if let earlier = contentLength, earlier != length {
                        return reject(.invalidContentLength, "differing Content-Length values")
                    }
                    contentLength = length
                }
            case 17 where HTTPHeaders.same(nameBytes, "Transfer-Encoding"):
                for item in String(decoding: valueBytes, as: UTF8.self).split(separator: ",") {
                    let coding = item.trimmingSpaces.lowercased()
                    if !coding.isEmpty { transferEncodings.append(coding) }
                }
            case 10 where HTTPHeaders.same(nameBytes, "Connection"):
                let value = String(decoding: valueBytes, as: UTF8.self)
                if headerValue(value, contains: "close") { connectionClose = true }
                if headerValue(value, contains: "keep-alive") { connectionKeepAlive = true }
            case 6 where HTTPHeaders.same(nameBytes, "Expect"):
                if HTTPHeaders.same(valueBytes, "100-continue") { expectContinue = true }
            default:
                break
            }
        }
        let headers = spans.isEmpty ? HTTPHeaders() : HTTPHeaders(raw: Array(UnsafeBufferPointer(rebasing: head[fieldsStart..<lineStart])), spans: spans)

        if version.minor >= 1 && hosts == 0 {
            return reject(.missingHost, "an HTTP/1.1 request needs a Host header")
        }
        if hosts > 1 {
            return reject(.malformedHeader, "more than one Host header")
        }
        var chunked = false
        if !transferEncodings.isEmpty {
            // RFC 9112 §6.1-6.3: both framings at once is a smuggling vector; refuse.
            if contentLength != nil {
                return reject(.conflictingFraming, "both Content-Length and Transfer-Encoding")
            }
            if version.minor == 0 {
                return reject(.invalidTransferEncoding, "Transfer-Encoding in an HTTP/1.0 request")
            }
            if transferEncodings.last != "chunked" || transferEncodings.dropLast().contains("chunked") {
                return reject(.invalidTransferEncoding, "chunked must be the final transfer coding, exactly once")
            }
            if transferEncodings.count > 1 {
                return reject(.unsupportedTransferCoding, "transfer coding \(transferEncodings[0]) is not implemented")
            }
            chunked = true
        }
        if let contentLength, contentLength > limits.maxBodyBytes {
            return reject(.bodyTooLarge, "the body (\(contentLength) bytes) is larger than \(limits.maxBodyBytes) bytes")
        }

        let keepAlive = version.minor >= 1 ? !connectionClose : (connectionKeepAlive && !connectionClose)
        let length = contentLength ?? 0
        if !chunked && length == 0 {
            // Built in place and handed out directly: parking it in `pending` costs a copy and a destroy.
            phase = .head(HeadScan())
            expectsContinue = false
            return .request(HTTPRequest(method: method, version: version, target: target, headers: headers, keepAlive: keepAlive))
        }
        if !chunked && length <= following.count {
            // The whole body is here (the usual case): the request is handed out directly, not
            // parked in `pending` and taken out again by `parse` (a copy, two destroys, a call).
            bodyConsumed = length
            phase = .head(HeadScan())
            expectsContinue = false
            let body = Array(UnsafeBufferPointer(rebasing: following[0..<length]))
            return .request(HTTPRequest(method: method, version: version, target: target, headers: headers, body: body, keepAlive: keepAlive))
        }
        var request = HTTPRequest(method: method, version: version, target: target, headers: headers, keepAlive: keepAlive)
        expectsContinue = expectContinue && version.minor >= 1
        if chunked {
            phase = .chunked(.size(value: 0, digits: 0))
        } else {
            request.body.reserveCapacity(length)
            phase = .fixedBody(remaining: length)
        }
        pending = consume request
        return .needMore
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
