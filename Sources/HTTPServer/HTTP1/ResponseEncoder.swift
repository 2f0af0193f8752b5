/// Serializes response heads and bodies into bytes; pure.
enum ResponseEncoder {
    /// Bodies up to this size are copied behind the head so the response leaves in one `send`;
    /// larger ones are queued by reference (no copy) and leave with the head in one `writev`.
    static let inlineBodyLimit = 16 * 1024

    /// The response as bytes, appended to `out` (the connection's queue): status line, headers, `Date`,
    /// `Content-Length` (always computed from the body, so an application can never break the framing;
    /// HEAD keeps an application's value), `Connection: close` when closing, blank line, and unless
    /// `isHead` the body, inline when small; a large body is returned apart, to be queued by reference.
    static func encode(
        _ response: HTTPResponse, date: [UInt8], keepAlive: Bool, isHead: Bool, into out: inout [UInt8]
    ) -> [UInt8]? {
        let sendsBody = !isHead && !response.status.forbidsBody
        let inline = sendsBody && response.body.count <= inlineBodyLimit
        let count = response.body.count
        encodeHead(
            response.status, response.headers, bodyCount: count, reserving: inline ? count : 0, date: date,
            keepAlive: keepAlive, isHead: isHead, into: &out)
        if inline { out.append(contentsOf: response.body) }
        return sendsBody && !inline ? response.body : nil
    }

    /// As ``encode(_:date:keepAlive:isHead:into:)``, for an answer whose body is bytes the caller holds (a
    /// 202's `{"seq":N}` on its stack): appended behind the head whatever its size, so no array is made for it.
    /// The status is a code with its standard reason phrase: no `HTTPStatus` is made or its phrase compared.
    static func encode(
        code: Int, headers: HTTPHeaders, body: UnsafeRawBufferPointer, date: [UInt8], keepAlive: Bool,
        isHead: Bool, into out: inout [UInt8]
    ) {
        let forbidsBody = HTTPStatus.forbidsBody(code)
        let sendsBody = !isHead && !forbidsBody
        out.reserveCapacity(out.count + 128 + headers.count * 40 + (sendsBody ? body.count : 0))
        appendStatusLine(code: code, to: &out)
        encodeFields(
            headers, bodyCount: body.count, forbidsBody: forbidsBody, date: date, keepAlive: keepAlive,
            isHead: isHead, into: &out)
        if sendsBody { out.append(contentsOf: body) }
    }

    /// The head of an answer with a body of `bodyCount` bytes, with room reserved for `reserving` more.
    @inline(__always)
    static func encodeHead(
        _ status: HTTPStatus, _ headers: HTTPHeaders, bodyCount: Int, reserving: Int, date: [UInt8], keepAlive: Bool,
        isHead: Bool, into out: inout [UInt8]
    ) {
        out.reserveCapacity(out.count + 128 + headers.count * 40 + reserving)
        appendStatusLine(status, to: &out)
        encodeFields(
            headers, bodyCount: bodyCount, forbidsBody: status.forbidsBody, date: date, keepAlive: keepAlive,
            isHead: isHead, into: &out)
    }

    /// A head's fields after its status line, through the blank line.
    @inline(__always)
    static func encodeFields(
        _ headers: HTTPHeaders, bodyCount: Int, forbidsBody: Bool, date: [UInt8], keepAlive: Bool, isHead: Bool,
        into out: inout [UInt8]
    ) {
        var hasDate = false
        var hasLength = false
        if let wire = headers.wireForm {
            // Constant headers: encoded and sanitized once, and free of the fields handled below.
            out.append(contentsOf: wire)
        } else {
            appendFields(headers, isHead: isHead, hasDate: &hasDate, hasLength: &hasLength, to: &out)
        }
        if !hasDate { out.append(contentsOf: date) }
        appendHeadEnd(length: !hasLength && !forbidsBody ? bodyCount : nil, close: !keepAlive, to: &out)
    }

    /// Appends an application's header fields, dropping those the server decides (`Content-Length`
    /// unless `isHead`, `Transfer-Encoding`, `Connection`) and noting `Date` and a kept length.
    static func appendFields(
        _ headers: HTTPHeaders, isHead: Bool, hasDate: inout Bool, hasLength: inout Bool, to out: inout [UInt8]
    ) {
        for (name, value) in headers {
            switch name.utf8.count {
            case 14 where HTTPHeaders.same(name, "Content-Length"):
                guard isHead && !hasLength else { continue }
                hasLength = true
            case 17 where HTTPHeaders.same(name, "Transfer-Encoding"):
                continue
            case 10 where HTTPHeaders.same(name, "Connection"):
                // The server decides persistence; `close` from the application was applied by the caller.
                continue
            case 4 where HTTPHeaders.same(name, "Date"):
                hasDate = true
            default:
                break
            }
            appendField(name, value, to: &out)
        }
    }

    /// The head of a streaming (Server-Sent Events) response: its body ends when the connection closes.
    static func encodeStreamHead(headers: HTTPHeaders, date: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + headers.count * 40)
        appendStatusLine(.ok, to: &out)
        var merged = headers
        if !merged.contains("Content-Type") { merged["Content-Type"] = "text/event-stream" }
        if !merged.contains("Cache-Control") { merged["Cache-Control"] = "no-cache" }
        merged["Content-Length"] = nil
        merged["Transfer-Encoding"] = nil
        merged["Connection"] = "close"
        for (name, value) in merged { appendField(name, value, to: &out) }
        out.append(contentsOf: date)
        out.append(contentsOf: "\r\n".utf8)
        return out
    }

    /// `HTTP/1.1 100 Continue`, sent before reading a body the client is holding back.
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Status lines of the most common answers, built once, indexed by `code - 100` (empty for the
    /// others): an array read, where a dictionary would hash the code on every response.
    private static let commonStatusLines: [[UInt8]] = (100..<600).map { code in
        [200, 201, 202, 204, 304, 400, 401, 403, 404, 409, 413, 422, 500, 503].contains(code)
            ? Array("HTTP/1.1 \(code) \(HTTPStatus.standardReason(code))\r\n".utf8) : []
    }

    /// The status line of `code` with its standard reason phrase.
    static func appendStatusLine(code: Int, to out: inout [UInt8]) {
        if (100..<600).contains(code) {
            let line = commonStatusLines[code - 100]
            if !line.isEmpty { return out.append(contentsOf: line) }
        }
        appendStatusLine(HTTPStatus(code: code), to: &out)
    }

    static func appendStatusLine(_ status: HTTPStatus, to out: inout [UInt8]) {
        if (100..<600).contains(status.code) {
            let line = commonStatusLines[status.code - 100]
            if !line.isEmpty, status.reasonPhrase == HTTPStatus.standardReason(status.code) {
                out.append(contentsOf: line)
                return
            }
        }
        appendLiteral("HTTP/1.1 ", to: &out)
        appendDecimal(status.code, to: &out)
        out.append(.space)
        appendSanitized(status.reasonPhrase, to: &out)
        appendLiteral("\r\n", to: &out)
    }

    static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        appendSanitized(name, to: &out)
        appendLiteral(": ", to: &out)
        appendSanitized(value, to: &out)
        appendLiteral("\r\n", to: &out)
    }

    /// Appends the end of a head: `Content-Length: <length>` unless `length` is nil, `Connection: close` when
    /// `close`, and the blank line. Written on the stack and appended once: as four appends (the literal, the
    /// digits, two line ends) it cost ~350 instructions per response, each append ~90.
    @inline(__always)
    static func appendHeadEnd(length: Int?, close: Bool, to out: inout [UInt8]) {
        // 16 + 20 digits (a UInt's largest) + 2 + 19 + 2 = 59 bytes at most: eight words.
        var scratch: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { scratch in
            let base = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var count = 0
            @inline(__always)
            func put(_ text: StaticString) {
                (base + count).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
                count &+= text.utf8CodeUnitCount
            }
            if let length {
                put("Content-Length: ")
                // A body's count is never negative: its magnitude is the count.
                var digits = 0
                var rest = length.magnitude
                repeat {
                    digits &+= 1
                    rest /= 10
                } while rest > 0
                rest = length.magnitude
                var index = count &+ digits
                repeat {
                    index &-= 1
                    base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                    rest /= 10
                } while rest > 0
                count &+= digits
                put("\r\n")
            }
            if close { put("Connection: close\r\n") }
            put("\r\n")
            out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
        }
    }

    /// Appends fixed protocol text (appending a `String`'s UTF8View goes byte by byte, several times slower).
    @inline(__always)
    static func appendLiteral(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Appends `text`, replacing CR, LF and NUL with spaces so an application value can never split a header.
    static func appendSanitized(_ text: String, to out: inout [UInt8]) {
        var text = text
        // Over contiguous bytes: iterating a String's UTF8View costs several times more per byte,
        // and this runs for every header of every response.
        text.withUTF8 { bytes in
            var clean = true
            for byte in bytes where byte == .cr || byte == .lf || byte == 0 {
                clean = false
                break
            }
            if clean {
                out.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                out.append(byte == .cr || byte == .lf || byte == 0 ? .space : byte)
            }
        }
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        if rest >= 100_000_000 {
            appendDecimal(Int(rest / 100_000_000), to: &out)
            rest %= 100_000_000
            // The low eight digits follow, zeros included.
            var divisor: UInt = 10_000_000
            while divisor > 0 {
                out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor % 10))
                divisor /= 10
            }
            return
        }
        // Up to eight digits gathered in one register (a tuple of digits appended as a slice cost
        // ~230 instructions for a two-digit length, on every response).
        var packed: UInt64 = 0
        var count = 0
        repeat {
            packed = packed << 8 | UInt64(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10))
            rest /= 10
            count += 1
        } while rest > 0
        for _ in 0..<count {
            out.append(UInt8(truncatingIfNeeded: packed))
            packed >>= 8
        }
    }
}
