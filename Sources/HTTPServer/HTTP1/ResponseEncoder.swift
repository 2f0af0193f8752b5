/// Serializes response heads and bodies into bytes; pure.
enum ResponseEncoder {
    /// The whole response as one byte array: status line, headers (plus `Date`, `Content-Length`
    /// and `Connection` when missing), blank line and, unless `isHead`, the body.
    static func encode(_ response: HTTPResponse, date: [UInt8], keepAlive: Bool, isHead: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + response.headers.count * 40 + (isHead ? 0 : response.body.count))
        appendStatusLine(response.status, to: &out)
        var hasLength = false
        var hasDate = false
        var hasConnection = false
        for (name, value) in response.headers {
            switch name.utf8.count {
            case 14 where HTTPHeaders.same(name, "Content-Length"): hasLength = true
            case 4 where HTTPHeaders.same(name, "Date"): hasDate = true
            case 10 where HTTPHeaders.same(name, "Connection"): hasConnection = true
            default: break
            }
            appendField(name, value, to: &out)
        }
        if !hasDate { out.append(contentsOf: date) }
        if !hasLength && !response.status.forbidsBody {
            out.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(response.body.count, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !hasConnection && !keepAlive { out.append(contentsOf: "Connection: close\r\n".utf8) }
        out.append(contentsOf: "\r\n".utf8)
        if !isHead && !response.status.forbidsBody { out.append(contentsOf: response.body) }
        return out
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

    static func appendStatusLine(_ status: HTTPStatus, to out: inout [UInt8]) {
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status.code, to: &out)
        out.append(.space)
        appendSanitized(status.reasonPhrase, to: &out)
        out.append(contentsOf: "\r\n".utf8)
    }

    static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        appendSanitized(name, to: &out)
        out.append(contentsOf: ": ".utf8)
        appendSanitized(value, to: &out)
        out.append(contentsOf: "\r\n".utf8)
    }

    /// Appends `text`, replacing CR, LF and NUL with spaces so an application value can never split a header.
    static func appendSanitized(_ text: String, to out: inout [UInt8]) {
        let utf8 = text.utf8
        if !utf8.contains(where: { $0 == .cr || $0 == .lf || $0 == 0 }) {
            out.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            out.append(byte == .cr || byte == .lf || byte == 0 ? .space : byte)
        }
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value.magnitude
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: buffer[(20 - count)...])
        }
    }
}
