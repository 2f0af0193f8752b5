import Testing

@testable import HTTPServer

/// Feeds `input` in pieces cut at `cuts`, keeping unconsumed bytes as a connection does, and
/// describes every outcome; stops at the first rejection.
func parseOutcomes(_ input: [UInt8], cuts: [Int], limits: HTTPParserLimits = RequestParserTests.limits) -> [String] {
    var parser = RequestParser(limits: limits)
    var kept: [UInt8] = []
    var outcomes: [String] = []
    var start = 0
    for end in cuts + [input.count] where end >= start {
        kept.append(contentsOf: input[start..<end])
        start = end
        parsing: while true {
            let (consumed, step) = kept.withUnsafeBufferPointer { parser.parse($0) }
            kept.removeFirst(consumed)
            switch step {
            case .needMore:
                break parsing
            case .request(let request):
                outcomes.append(describe(request))
            case .rejected(let rejection):
                outcomes.append("rejected \(rejection.status.code) \(rejection.kind)")
                return outcomes
            }
        }
    }
    if parser.isMidRequest || !kept.isEmpty { outcomes.append("incomplete") }
    return outcomes
}

func describe(_ request: HTTPRequest) -> String {
    let headers = request.headers.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
    return
        "\(request.method.rawValue) \(request.target) \(request.version) keepAlive=\(request.keepAlive) [\(headers)] "
        + "body=\(String(decoding: request.body, as: UTF8.self))"
}

struct ParserCase: CustomTestStringConvertible, Sendable {
    var name: String
    var input: [UInt8]
    var expected: [String]
    var testDescription: String { name }

    init(_ name: String, _ input: String, _ expected: [String]) {
        self.name = name
        self.input = Array(input.utf8)
        self.expected = expected
    }

    init(_ name: String, bytes: [UInt8], _ expected: [String]) {
        self.name = name
        self.input = bytes
        self.expected = expected
    }
}

let get = "GET / HTTP/1.1 keepAlive=true [Host=a] body="

@Suite struct RequestParserTests {
    static let limits: HTTPParserLimits = {
        var limits = HTTPParserLimits()
        limits.maxRequestLineBytes = 64
        limits.maxHeaderBytes = 300
        limits.maxHeaderCount = 6
        limits.maxBodyBytes = 32
        return limits
    }()

    static let cases: [ParserCase] = [
        // Valid requests.
        ParserCase("simple GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", [get]),
        ParserCase("bare LF line endings", "GET / HTTP/1.1\nHost: a\n\n", [get]),
        ParserCase("empty lines before the request line", "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", [get]),
        ParserCase("optional whitespace around values", "GET / HTTP/1.1\r\nHost: \t a \t\r\n\r\n", [get]),
        ParserCase(
            "empty value", "GET / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\n\r\n",
            ["GET / HTTP/1.1 keepAlive=true [Host=a,X-Empty=] body="]),
        ParserCase(
            "obs-text in a value",
            bytes: Array("GET / HTTP/1.1\r\nHost: a\r\nX: ".utf8) + [0xC3, 0xA9] + Array("\r\n\r\n".utf8),
            ["GET / HTTP/1.1 keepAlive=true [Host=a,X=é] body="]),
        ParserCase(
            "content-length body", "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
            ["POST /a HTTP/1.1 keepAlive=true [Host=a,Content-Length=5] body=hello"]),
        ParserCase(
            "identical duplicate content-length",
            "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi",
            ["POST /a HTTP/1.1 keepAlive=true [Host=a,Content-Length=2,Content-Length=2] body=hi"]),
        ParserCase(
            "content-length list of equal values", "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n\r\nhi",
            ["POST /a HTTP/1.1 keepAlive=true [Host=a,Content-Length=2, 2] body=hi"]),
        ParserCase(
            "content-length zero", "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
            ["POST /a HTTP/1.1 keepAlive=true [Host=a,Content-Length=0] body="]),
        ParserCase(
            "chunked with extensions and trailers",
            "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;ext=1\r\nhello\r\nA ; x\r\n, world!!!\r\n0\r\nX-Trailer: t\r\n\r\n",
            ["POST /c HTTP/1.1 keepAlive=true [Host=a,Transfer-Encoding=chunked] body=hello, world!!!"]),
        ParserCase(
            "chunked, upper-case hex and LF-only lines",
            "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\nB\nhello world\n0\n\n",
            ["POST /c HTTP/1.1 keepAlive=true [Host=a,Transfer-Encoding=Chunked] body=hello world"]),
        ParserCase(
            "pipelined requests",
            "GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n"
                + "xGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            [get, "POST /p HTTP/1.1 keepAlive=true [Host=a,Content-Length=1] body=x", get]),
        ParserCase("HTTP/1.0 closes by default", "GET / HTTP/1.0\r\n\r\n", ["GET / HTTP/1.0 keepAlive=false [] body="]),
        ParserCase(
            "HTTP/1.0 keep-alive on request", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
            ["GET / HTTP/1.0 keepAlive=true [Connection=Keep-Alive] body="]),
        ParserCase(
            "Connection: close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            ["GET / HTTP/1.1 keepAlive=false [Host=a,Connection=close] body="]),
        ParserCase(
            "absolute-form target", "GET http://a/x?y=1 HTTP/1.1\r\nHost: a\r\n\r\n",
            ["GET http://a/x?y=1 HTTP/1.1 keepAlive=true [Host=a] body="]),
        ParserCase(
            "asterisk-form for OPTIONS", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
            ["OPTIONS * HTTP/1.1 keepAlive=true [Host=a] body="]),
        ParserCase("HEAD", "HEAD /h HTTP/1.1\r\nHost: a\r\n\r\n", ["HEAD /h HTTP/1.1 keepAlive=true [Host=a] body="]),
        // Methods: any token reaches the responder, which knows what each path serves.
        ParserCase(
            "a method this module has no name for", "QUERY /q HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
            ["QUERY /q HTTP/1.1 keepAlive=true [Host=a,Content-Length=2] body={}"]),
        ParserCase(
            "any token method", "BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n",
            ["BREW /pot HTTP/1.1 keepAlive=true [Host=a] body="]),
        ParserCase(
            "lower-case method is another method", "get / HTTP/1.1\r\nHost: a\r\n\r\n",
            ["get / HTTP/1.1 keepAlive=true [Host=a] body="]),
        ParserCase(
            "token symbols in a method", "M-1.x!~ / HTTP/1.1\r\nHost: a\r\n\r\n",
            ["M-1.x!~ / HTTP/1.1 keepAlive=true [Host=a] body="]),
        // Host (RFC 9112 §3.2, RFC 9110 §7.2).
        ParserCase(
            "host with port", "GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
            ["GET / HTTP/1.1 keepAlive=true [Host=example.com:8080] body="]),
        ParserCase(
            "IPv6 host", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
            ["GET / HTTP/1.1 keepAlive=true [Host=[::1]:80] body="]),
        ParserCase("empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", ["GET / HTTP/1.1 keepAlive=true [Host=] body="]),
        ParserCase(
            "escaped and sub-delims host", "GET / HTTP/1.1\r\nHost: a%2Db!$&'()*+,;=_~\r\n\r\n",
            ["GET / HTTP/1.1 keepAlive=true [Host=a%2Db!$&'()*+,;=_~] body="]),
        ParserCase("HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", ["GET / HTTP/1.0 keepAlive=false [] body="]),
        ParserCase(
            "absolute-form agrees with Host, default port", "GET http://A:80/x HTTP/1.1\r\nHost: a\r\n\r\n",
            ["GET http://A:80/x HTTP/1.1 keepAlive=true [Host=a] body="]),
        ParserCase(
            "absolute-form https default port", "GET https://a/x HTTP/1.1\r\nHost: a:443\r\n\r\n",
            ["GET https://a/x HTTP/1.1 keepAlive=true [Host=a:443] body="]),
        ParserCase(
            "absolute-form without a path", "GET http://a:8080?q HTTP/1.1\r\nHost: a:8080\r\n\r\n",
            ["GET http://a:8080?q HTTP/1.1 keepAlive=true [Host=a:8080] body="]),
        ParserCase(
            "later HTTP/1.x minor version", "GET / HTTP/1.2\r\nHost: a\r\n\r\n",
            ["GET / HTTP/1.2 keepAlive=true [Host=a] body="]),
        ParserCase("incomplete head", "GET / HTTP/1.1\r\nHost: a\r\n", ["incomplete"]),
        ParserCase("incomplete body", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel", ["incomplete"]),
        ParserCase(
            "body exactly at the limit",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 32\r\n\r\n" + String(repeating: "b", count: 32),
            ["POST / HTTP/1.1 keepAlive=true [Host=a,Content-Length=32] body=" + String(repeating: "b", count: 32)]),

        // Framing that could smuggle a second request.
        ParserCase(
            "content-length with transfer-encoding",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            ["rejected 400 conflictingFraming"]),
        ParserCase(
            "differing duplicate content-length",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "differing content-length list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\nabcd",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "non-numeric content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "negative content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "signed content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\nx",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "overflowing content-length",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "empty content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n",
            ["rejected 400 invalidContentLength"]),
        ParserCase(
            "transfer coding other than chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
            ["rejected 400 invalidTransferEncoding"]),
        ParserCase(
            "chunked not final", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            ["rejected 400 invalidTransferEncoding"]),
        ParserCase(
            "chunked twice",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            ["rejected 400 invalidTransferEncoding"]),
        ParserCase(
            "unsupported coding before chunked",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            ["rejected 501 unsupportedTransferCoding"]),
        ParserCase(
            "transfer-encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            ["rejected 400 invalidTransferEncoding"]),
        ParserCase(
            "non-hex chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            ["rejected 400 invalidChunk"]),
        ParserCase(
            "negative chunk size",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
            ["rejected 400 invalidChunk"]),
        ParserCase(
            "overflowing chunk size",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n",
            ["rejected 400 invalidChunk"]),
        ParserCase(
            "chunk data longer than its size",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            ["rejected 400 invalidChunk"]),
        ParserCase(
            "bare CR in a chunk size line",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\rab\r\n0\r\n\r\n",
            ["rejected 400 invalidChunk"]),
        ParserCase(
            "chunked body over the limit",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n11\r\n",
            ["rejected 413 bodyTooLarge"]),

        // Malformed heads.
        ParserCase(
            "whitespace before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", ["rejected 400 malformedHeader"]),
        ParserCase(
            "obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n  c\r\n\r\n", ["rejected 400 obsoleteLineFolding"]),
        ParserCase(
            "NUL in a value", bytes: Array("GET / HTTP/1.1\r\nHost: a\u{0}b\r\n\r\n".utf8),
            ["rejected 400 invalidCharacter"]),
        ParserCase("bare CR in a value", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", ["rejected 400 invalidCharacter"]),
        ParserCase(
            "control byte in a value", "GET / HTTP/1.1\r\nHost: a\u{1}\r\n\r\n", ["rejected 400 invalidCharacter"]),
        ParserCase("DEL in a value", "GET / HTTP/1.1\r\nHost: a\u{7F}\r\n\r\n", ["rejected 400 invalidCharacter"]),
        ParserCase(
            "control byte in a name", "GET / HTTP/1.1\r\nHo\u{1}st: a\r\n\r\n", ["rejected 400 invalidCharacter"]),
        ParserCase(
            "NUL in the target", bytes: Array("GET /a\u{0}b HTTP/1.1\r\nHost: a\r\n\r\n".utf8),
            ["rejected 400 invalidCharacter"]),
        ParserCase(
            "bare CR in the request line", "GET /a\rb HTTP/1.1\r\nHost: a\r\n\r\n", ["rejected 400 invalidCharacter"]),
        ParserCase(
            "bare CR before the request line", "\rGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            ["rejected 400 invalidCharacter"]),
        ParserCase("no colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", ["rejected 400 malformedHeader"]),
        ParserCase("empty field name", "GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", ["rejected 400 malformedHeader"]),
        ParserCase("separator in a field name", "GET / HTTP/1.1\r\nHo(st: a\r\n\r\n", ["rejected 400 malformedHeader"]),
        ParserCase("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nX: a\r\n\r\n", ["rejected 400 missingHost"]),
        ParserCase("two Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase(
            "two Host fields in HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n",
            ["rejected 400 invalidHost"]),
        ParserCase("CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", ["rejected 501 unsupportedMethod"]),
        ParserCase("space in Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("slash in Host", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("user information in Host", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("two colons in Host", "GET / HTTP/1.1\r\nHost: a:1:2\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("port not a number", "GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("port above 65535", "GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("unclosed IP literal", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("junk after an IP literal", "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("letters in an IPv6 literal", "GET / HTTP/1.1\r\nHost: [::g]\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase("broken escape in Host", "GET / HTTP/1.1\r\nHost: a%2\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase(
            "non-ASCII Host", bytes: Array("GET / HTTP/1.1\r\nHost: é\r\n\r\n".utf8), ["rejected 400 invalidHost"]),
        ParserCase("invalid Host in HTTP/1.0", "GET / HTTP/1.0\r\nHost: a b\r\n\r\n", ["rejected 400 invalidHost"]),
        ParserCase(
            "Host disagrees with an absolute-form target", "GET http://a/x HTTP/1.1\r\nHost: b\r\n\r\n",
            ["rejected 400 invalidHost"]),
        ParserCase(
            "Host port disagrees with an absolute-form target", "GET http://a:8080/x HTTP/1.1\r\nHost: a\r\n\r\n",
            ["rejected 400 invalidHost"]),
        ParserCase(
            "absolute-form target with user information", "GET http://u@a/x HTTP/1.1\r\nHost: a\r\n\r\n",
            ["rejected 400 malformedRequestLine"]),
        ParserCase(
            "absolute-form target without a host", "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n",
            ["rejected 400 malformedRequestLine"]),
        ParserCase(
            "method that is not a token", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", ["rejected 400 malformedRequestLine"]),
        ParserCase("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", ["rejected 505 unsupportedVersion"]),
        ParserCase("HTTP/0.9-style version", "GET / HTTP/0.9\r\nHost: a\r\n\r\n", ["rejected 505 unsupportedVersion"]),
        ParserCase("malformed version", "GET / HTTX/1.1\r\nHost: a\r\n\r\n", ["rejected 400 malformedRequestLine"]),
        ParserCase("missing version", "GET /\r\nHost: a\r\n\r\n", ["rejected 400 malformedRequestLine"]),
        ParserCase("double space", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", ["rejected 400 malformedRequestLine"]),
        ParserCase(
            "target without a slash", "GET foo HTTP/1.1\r\nHost: a\r\n\r\n", ["rejected 400 malformedRequestLine"]),
        ParserCase(
            "asterisk target for GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", ["rejected 400 malformedRequestLine"]),
        ParserCase(
            "non-ASCII in the target", bytes: Array("GET /é HTTP/1.1\r\nHost: a\r\n\r\n".utf8),
            ["rejected 400 malformedRequestLine"]),

        // Limits (64-byte request line, 300-byte head, 6 fields, 32-byte body in this table).
        ParserCase(
            "request line too long", "GET /" + String(repeating: "a", count: 64) + " HTTP/1.1\r\nHost: a\r\n\r\n",
            ["rejected 414 requestLineTooLong"]),
        ParserCase(
            "request line too long, never ended", "GET /" + String(repeating: "a", count: 100),
            ["rejected 414 requestLineTooLong"]),
        ParserCase(
            "header block too large",
            "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 300) + "\r\n\r\n",
            ["rejected 431 headerTooLarge"]),
        ParserCase(
            "too many fields", "GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X: 1\r\n", count: 6) + "\r\n",
            ["rejected 431 tooManyHeaders"]),
        ParserCase(
            "declared body too large", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 33\r\n\r\n",
            ["rejected 413 bodyTooLarge"]),
        // Found by the fuzzer: a request line longer than both limits is a 414 wherever the input is split.
        ParserCase(
            "request line longer than the whole head limit",
            "GET /" + String(repeating: "%", count: 520) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            ["rejected 414 requestLineTooLong"]),
        ParserCase(
            "request after a good one is rejected alone", "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/9.9\r\n\r\n",
            [get, "rejected 505 unsupportedVersion"]),
    ]

    @Test(arguments: cases)
    func wholeInput(_ testCase: ParserCase) {
        #expect(parseOutcomes(testCase.input, cuts: []) == testCase.expected)
    }

    @Test(arguments: cases)
    func byteByByte(_ testCase: ParserCase) {
        #expect(parseOutcomes(testCase.input, cuts: Array(0..<testCase.input.count)) == testCase.expected)
    }

    @Test(arguments: cases)
    func splitAtEveryOffset(_ testCase: ParserCase) {
        for cut in 0...testCase.input.count {
            #expect(parseOutcomes(testCase.input, cuts: [cut]) == testCase.expected, "split at \(cut)")
        }
    }

    /// Field values are scanned a word at a time up to their first control byte: every byte class at every
    /// position of a value longer than two words, before another field, is judged as byte by byte.
    @Test func everyByteAtEveryPositionOfALongValueIsJudgedAsItsClassSays() {
        let length = 20
        for byte: UInt8 in [0x00, 0x01, 0x09, 0x0D, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xFF] {
            for position in 0..<length {
                var value = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                value[position] = byte
                let input =
                    Array("GET / HTTP/1.1\r\nHost: a\r\nX-Long: ".utf8) + value + Array("\r\nAccept: */*\r\n\r\n".utf8)
                let refused = byte < 0x20 && byte != 0x09 || byte == 0x7F
                var parser = RequestParser(limits: Self.limits)
                let (_, step) = input.withUnsafeBufferPointer { parser.parse($0) }
                switch step {
                case .request(let request):
                    #expect(!refused, "byte \(byte) at \(position) was taken")
                    // Leading and trailing whitespace is not part of the value.
                    var expected = value[...]
                    while let first = expected.first, first == 0x20 || first == 0x09 { expected.removeFirst() }
                    while let last = expected.last, last == 0x20 || last == 0x09 { expected.removeLast() }
                    let matches = request.headers.firstValue("X-Long") { Array($0) == Array(expected) }
                    #expect(matches, "byte \(byte) at \(position)")
                    #expect(request.headers["Accept"] == "*/*")
                case .rejected(let rejection):
                    #expect(refused, "byte \(byte) at \(position) was refused: \(rejection.kind)")
                    #expect(rejection.kind == .invalidCharacter)
                case .needMore:
                    Issue.record("byte \(byte) at \(position): the complete head asked for more")
                }
            }
        }
    }

    @Test func expectContinueIsReportedUntilTheBodyStarts() {
        var parser = RequestParser()
        let head = Array("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8)
        let (consumed, step) = head.withUnsafeBufferPointer { parser.parse($0) }
        #expect(consumed == head.count)
        guard case .needMore = step else {
            Issue.record("expected needMore, got \(step)")
            return
        }
        #expect(parser.expectsContinue)
        let body = Array("ok".utf8)
        let (_, done) = body.withUnsafeBufferPointer { parser.parse($0) }
        guard case .request(let request) = done else {
            Issue.record("expected a request, got \(done)")
            return
        }
        #expect(request.body == body)
        #expect(!parser.expectsContinue)
    }

    @Test func aDeclaredLengthIsNotAllocatedBeforeTheBodyArrives() {
        var parser = RequestParser()
        let head = Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\nabc".utf8)
        let (consumed, step) = head.withUnsafeBufferPointer { parser.parse($0) }
        #expect(consumed == head.count)
        guard case .needMore = step else {
            Issue.record("expected needMore, got \(step)")
            return
        }
        #expect(parser.pending?.body.count == 3)
        #expect((parser.pending?.body.capacity ?? .max) <= RequestParser.initialBodyCapacity * 2)
    }

    @Test func incompleteHeadIsNotConsumedAndScanningResumes() {
        var parser = RequestParser()
        let part = Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8)
        let (consumed, _) = part.withUnsafeBufferPointer { parser.parse($0) }
        #expect(consumed == 0)
        #expect(parser.isMidRequest)
        let whole = part + Array("\r\n".utf8)
        let (all, step) = whole.withUnsafeBufferPointer { parser.parse($0) }
        #expect(all == whole.count)
        guard case .request = step else {
            Issue.record("expected a request")
            return
        }
        #expect(!parser.isMidRequest)
    }

    @Test func defaultLimitsMatchTheDocumentedValues() {
        let limits = HTTPParserLimits()
        #expect(limits.maxRequestLineBytes == 8192)
        #expect(limits.maxHeaderBytes == 32768)
        #expect(limits.maxHeaderCount == 100)
        #expect(limits.maxBodyBytes == 1_048_576)
    }
}
