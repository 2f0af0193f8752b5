extension RequestParser {
    /// The most body capacity reserved before the body arrives.
    static let initialBodyCapacity = 16 * 1024

    /// Parses a complete head (`head` ends with the empty line, after `fieldLines` field lines) and
    /// sets up body reading; a fixed-length body wholly in `following` is read at once, and
    /// `bodyConsumed` is set to its length. The head is read in three steps, whose errors come in
    /// this order: the request line, the field lines, then what they say together (`Host`, framing).
    mutating func parseCompleteHead(
        _ head: UnsafeBufferPointer<UInt8>, requestLineEnd: Int, fieldLines: Int, following: UnsafeBufferPointer<UInt8>,
        bodyConsumed: inout Int
    ) -> Step {
        let line: RequestLine
        var fields = FieldLines()
        let headers: HTTPHeaders
        let declaredLength: Int?
        do throws(HTTPRejection) {
            line = try Self.parseRequestLine(UnsafeBufferPointer(rebasing: head[0..<requestLineEnd]))
            // The request line ends in CRLF or LF.
            headers = try Self.parseFieldLines(
                head, from: requestLineEnd + (head[requestLineEnd] == .cr ? 2 : 1), count: fieldLines,
                keeping: UnsafeBufferPointer(rebasing: head[line.targetRange]), noting: &fields)
            if let host = try Self.checkHost(fields, in: head, version: line.version), line.isAbsoluteForm {
                try Self.checkAuthority(
                    of: line.target(in: head), agreesWith: host, UnsafeBufferPointer(rebasing: head[fields.host]))
            }
            declaredLength = try Self.bodyLength(fields, in: head, version: line.version, limits: limits)
        } catch {
            return reject(error)
        }
        let version = line.version
        // The target's bytes lie at the end of the headers' array (no `String` made per request); with no field
        // lines (HTTP/1.0) there is no array, and the target is text.
        let target =
            fieldLines > 0
            ? HTTPRequest.Target(parsedIn: headers.storage, count: line.targetRange.count)
            : HTTPRequest.Target(text: line.target(in: head))
        let keepAlive =
            version.minor >= 1 ? !fields.connectionClose : (fields.connectionKeepAlive && !fields.connectionClose)
        guard let length = declaredLength else {
            pending = HTTPRequest(
                method: line.method, version: version, target: target, headers: headers, keepAlive: keepAlive)
            expectsContinue = fields.expectContinue
            phase = .chunked(.size(value: 0, digits: 0))
            return .needMore
        }
        if length == 0 {
            // Built in place and handed out directly: parking it in `pending` costs a copy and a destroy.
            phase = .head(HeadScan())
            expectsContinue = false
            return .request(
                HTTPRequest(
                    method: line.method, version: version, target: target, headers: headers, keepAlive: keepAlive))
        }
        if length <= following.count {
            // The whole body is here (the usual case): the request is handed out directly, not
            // parked in `pending` and taken out again by `parse` (a copy, two destroys, a call).
            bodyConsumed = length
            phase = .head(HeadScan())
            expectsContinue = false
            let body = Array(UnsafeBufferPointer(rebasing: following[0..<length]))
            return .request(
                HTTPRequest(
                    method: line.method, version: version, target: target, headers: headers, body: body,
                    keepAlive: keepAlive))
        }
        var request = HTTPRequest(
            method: line.method, version: version, target: target, headers: headers, keepAlive: keepAlive)
        // Reserved up to 16 KiB: a declared length alone must not make the server allocate it (14,000
        // slow-body connections declaring 64 KiB and sending 16 bytes took 70 MiB); the rest grows as it arrives.
        request.body.reserveCapacity(min(length, Self.initialBodyCapacity))
        expectsContinue = fields.expectContinue && version.minor >= 1
        phase = .fixedBody(remaining: length)
        pending = consume request
        return .needMore
    }
}
