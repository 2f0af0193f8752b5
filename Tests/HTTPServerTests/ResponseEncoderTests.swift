import Testing

@testable import HTTPServer

@Suite struct ResponseEncoderTests {
    static let date = Array("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n".utf8)

    /// The response's head and (a separate) body as the connection encodes them into its queue.
    func encode(_ response: HTTPResponse, keepAlive: Bool = true, isHead: Bool = false) -> (
        head: [UInt8], separate: [UInt8]?
    ) {
        var head: [UInt8] = []
        let body = ResponseEncoder.encode(response, date: Self.date, keepAlive: keepAlive, isHead: isHead, into: &head)
        return (head, body)
    }

    func text(_ response: HTTPResponse, keepAlive: Bool = true, isHead: Bool = false) -> String {
        let (head, body) = encode(response, keepAlive: keepAlive, isHead: isHead)
        return String(decoding: head + (body ?? []), as: UTF8.self)
    }

    @Test func encodesStatusHeadersDateLengthAndBody() {
        let response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        #expect(
            text(response)
                == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                + "Content-Length: 2\r\n\r\n{}"
        )
    }

    /// An answer from a code and borrowed body bytes (the 202 of a POST) is byte for byte the answer the
    /// `HTTPResponse` path encodes for the same status, headers and body: common and uncommon codes, codes
    /// that forbid a body, HEAD, closing, constant and built headers.
    @Test func anAnswerFromACodeAndBytesIsTheSameAsFromAResponse() {
        let constant = HTTPHeaders(constant: [("Content-Type", "application/json; charset=utf-8")])
        let built: HTTPHeaders = ["X-One": "1", "Content-Length": "99"]
        for code in [200, 202, 204, 299, 304, 404, 503, 599] {
            for headers in [constant, built, HTTPHeaders()] {
                for (keepAlive, isHead) in [(true, false), (false, false), (true, true)] {
                    let body = Array("{\"seq\":\(code)}\n".utf8)
                    var fromBytes: [UInt8] = []
                    body.withUnsafeBytes {
                        ResponseEncoder.encode(
                            code: code, headers: headers, body: $0, date: Self.date, keepAlive: keepAlive,
                            isHead: isHead, into: &fromBytes)
                    }
                    let response = HTTPResponse(status: HTTPStatus(code: code), headers: headers, body: body)
                    let (head, separate) = encode(response, keepAlive: keepAlive, isHead: isHead)
                    #expect(separate == nil)
                    #expect(
                        String(decoding: fromBytes, as: UTF8.self) == String(decoding: head, as: UTF8.self),
                        "code \(code), keep-alive \(keepAlive), HEAD \(isHead)")
                }
            }
        }
    }

    @Test func keepsACustomReasonAndMarksTheLastResponse() {
        let response = HTTPResponse(status: HTTPStatus(code: 200, reasonPhrase: "Fine"))
        #expect(
            text(response, keepAlive: false)
                == "HTTP/1.1 200 Fine\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 0\r\nConnection: "
                + "close\r\n\r\n"
        )
    }

    @Test func neverLetsAValueSplitAHeader() {
        let response = HTTPResponse(status: 204, headers: ["X-Evil": "a\r\nSet-Cookie: b"])
        #expect(
            text(response)
                == "HTTP/1.1 204 No Content\r\nX-Evil: a  Set-Cookie: b\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")
    }

    @Test func sendsLargeBodiesByReference() {
        let body = [UInt8](repeating: 1, count: ResponseEncoder.inlineBodyLimit + 1)
        let (head, separate) = encode(HTTPResponse(status: 200, body: body))
        #expect(separate == body)
        #expect(String(decoding: head, as: UTF8.self).hasSuffix("Content-Length: \(body.count)\r\n\r\n"))
    }

    @Test func appendsBehindWhatTheQueueHolds() {
        var queue = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        let before = queue
        let body = ResponseEncoder.encode(
            HTTPResponse(status: 200, body: Array("hi".utf8)), date: Self.date, keepAlive: true, isHead: false,
            into: &queue)
        #expect(body == nil, "a small body goes inline")
        #expect(Array(queue.prefix(before.count)) == before)
        #expect(
            String(decoding: queue.dropFirst(before.count), as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 2\r\n\r\nhi")
    }

    @Test(arguments: [
        0, 7, 9, 10, 42, 99, 100, 999, 65_536, 12_345_678, 99_999_999, 100_000_000, 100_000_007,
        1_234_567_890_123, Int.max, -5, -100_000_000, Int.min + 1,
    ])
    func writesDecimalsAsSwiftPrintsThem(_ value: Int) {
        var out: [UInt8] = Array("x".utf8)
        ResponseEncoder.appendDecimal(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "x\(value)")
    }

    @Test func formatsTheDateHeaderAsIMFFixdate() {
        #expect(
            String(decoding: HTTPDate.format(784_111_777), as: UTF8.self) == "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n")
    }
}
