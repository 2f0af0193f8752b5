import Testing

@testable import HTTPServer

/// Parsed headers keep their field lines and a table of where each name and value lies in one array: every
/// way of reading them must agree with the fields as sent, for short heads (laid out on the stack) and long
/// ones (more than a kilobyte of lines and table), with CR LF or bare LF line ends.
@Suite struct ParsedHeadersTests {
    /// Parses one complete head with default limits and returns the request.
    static func parse(_ text: String) throws -> HTTPRequest {
        var parser = RequestParser(limits: HTTPParserLimits())
        let bytes = Array(text.utf8)
        let (consumed, step) = bytes.withUnsafeBufferPointer { parser.parse($0) }
        guard case .request(let request) = step else {
            Issue.record("the head was not parsed into a request: \(step)")
            throw CancellationError()
        }
        #expect(consumed == bytes.count)
        return request
    }

    /// The fields of a head, in order, as (name, value) pairs.
    static let fields: [(String, String)] = [
        ("Host", "example.test"), ("User-Agent", "curl/8.5.0"), ("Accept", "*/*"),
        ("content-type", "application/json; charset=utf-8"), ("X-Empty", ""), ("X-Twice", "first"),
        ("x-twice", "second"), ("X-Spaced", "a \t b"),
    ]

    /// A POST head with `fields` and then `extra` generated fields, its lines ended by `end`.
    static func head(extra: Int, end: String) -> String {
        var lines = ["POST /sessions/s1/actions HTTP/1.1"]
        lines += fields.map { "\($0.0): \($0.1)" }
        lines += (0..<extra).map { "X-Filler-\($0): \(String(repeating: "v", count: $0 % 40))" }
        return lines.joined(separator: end) + end + end
    }

    @Test(arguments: [0, 90], ["\r\n", "\n"])
    func everyLookupReadsTheFieldsAsSent(extra: Int, end: String) throws {
        let request = try Self.parse(Self.head(extra: extra, end: end))
        let headers = request.headers
        #expect(headers.count == Self.fields.count + extra)
        for (position, (name, value)) in Self.fields.enumerated() {
            #expect(headers[position].name == name)
            #expect(headers[position].value == value)
        }
        #expect(headers[Self.fields.count + extra - 1].name == "X-Filler-\(extra - 1)" || extra == 0)
        #expect(headers["HOST"] == "example.test")
        #expect(headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(headers["x-empty"] == "")
        #expect(headers["X-Twice"] == "first")
        #expect(headers.values("X-TWICE") == ["first", "second"])
        #expect(headers.contains("x-spaced"))
        #expect(!headers.contains("X-Absent"))
        #expect(headers["X-Absent"] == nil)
        #expect(headers.fields.map(\.name) == headers.map(\.name))
        // Both lookups with a predicate: a String name and a literal one, on the first field of that name.
        #expect(headers.firstValue("x-twice") { String(decoding: $0, as: UTF8.self) == "first" })
        #expect(headers.firstValue(named: "X-Twice") { String(decoding: $0, as: UTF8.self) == "first" })
        #expect(headers.firstValue(named: "CONTENT-TYPE") { $0.count == 31 })
        #expect(!headers.firstValue(named: "X-Absent") { _ in true })
        #expect(!headers.firstValue(named: "X-Twic") { _ in true })
        if extra > 0 {
            let last = "X-Filler-\(extra - 1)"
            #expect(headers[last] == String(repeating: "v", count: (extra - 1) % 40))
            #expect(headers.firstValue(named: "X-Filler-89") { $0.count == 89 % 40 })
        }
    }

    /// The first `Content-Type` the parser noted, in any case, is what `contentTypeSatisfies` reads; names of the
    /// same length are not taken for it, and headers changed after parsing are searched as before.
    @Test(arguments: ["\r\n", "\n"])
    func theNotedContentTypeIsTheFirstOfThatName(end: String) throws {
        func value(_ headers: HTTPHeaders) -> String? {
            var found: String?
            let present = headers.contentTypeSatisfies {
                found = String(decoding: $0, as: UTF8.self)
                return true
            }
            return present ? found : nil
        }
        let lines = [
            "POST /a HTTP/1.1", "Host: h", "X-Request-Id: 12", "Content-Typf: no", "cONTENT-tYPE:  text/plain  ",
            "Content-Type: application/json", "",
        ]
        let headers = try Self.parse(lines.joined(separator: end) + end).headers
        #expect(value(headers) == "text/plain")
        #expect(headers.contentTypeSatisfies { $0.count == 10 })
        #expect(!headers.contentTypeSatisfies { $0.count == 16 })
        let none = try Self.parse(
            ["GET /a HTTP/1.1", "Host: h", "Content_Type: x", "Content-Typ: y", ""]
                .joined(separator: end) + end
        ).headers
        #expect(value(none) == nil)
        var changed = headers
        changed["Content-Type"] = "application/json"
        #expect(value(changed) == "application/json")
        let built: HTTPHeaders = ["content-type": "a/b"]
        #expect(value(built) == "a/b")
        #expect(value(HTTPHeaders()) == nil)
        // The parsed head's target lies behind the field lines' table, in the same array.
        let request = try Self.parse(Self.head(extra: 90, end: end))
        #expect(request.target == "/sessions/s1/actions")
        #expect(request.withTargetBytes { Array($0) } == Array("/sessions/s1/actions".utf8))
        #expect(request.headers.storage.suffix(20) == Array("/sessions/s1/actions".utf8))
    }

    @Test func aChangedParsedFieldMakesBuiltHeadersThatReadTheSame() throws {
        var headers = try Self.parse(Self.head(extra: 0, end: "\r\n")).headers
        headers["X-Twice"] = "only"
        #expect(headers.values("x-twice") == ["only"])
        #expect(headers["Host"] == "example.test")
        #expect(headers.firstValue(named: "content-type") { $0.count == 31 })
        #expect(headers.count == Self.fields.count - 1)
        #expect(headers.wireForm == nil)
    }

    @Test func aHeadWithoutFieldsHasNoHeadersAndIsRefusedForItsMissingHost() throws {
        var parser = RequestParser(limits: HTTPParserLimits())
        let bytes = Array("GET / HTTP/1.0\r\n\r\n".utf8)
        let (_, step) = bytes.withUnsafeBufferPointer { parser.parse($0) }
        guard case .request(let request) = step else {
            Issue.record("an HTTP/1.0 head without fields was not taken: \(step)")
            return
        }
        #expect(request.headers.isEmpty)
        #expect(!request.headers.firstValue(named: "Host") { _ in true })
        var strict = RequestParser(limits: HTTPParserLimits())
        let bytes11 = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let (_, refused) = bytes11.withUnsafeBufferPointer { strict.parse($0) }
        guard case .rejected = refused else {
            Issue.record("an HTTP/1.1 head without Host was taken: \(refused)")
            return
        }
    }
}
