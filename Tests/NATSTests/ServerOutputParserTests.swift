import Testing

@testable import NATS

/// Feeds `input` in pieces cut at `cuts`, keeping unconsumed bytes as the connection does, and
/// describes every outcome; stops at the first rejection. Checks that nothing is consumed
/// without an operation, and never more than was given.
func parseOutcomes(_ input: [UInt8], cuts: [Int], limits: NATSParserLimits = ServerOutputParserTests.limits) -> [String]
{
    var parser = ServerOutputParser(limits: limits)
    var kept: [UInt8] = []
    var outcomes: [String] = []
    var start = 0
    for end in cuts + [input.count] where end >= start {
        kept.append(contentsOf: input[start..<end])
        start = end
        parsing: while true {
            let (consumed, step) = kept.withUnsafeBufferPointer { buffer in
                let (consumed, step) = parser.parse(buffer)
                return (consumed, describe(step, in: buffer))
            }
            #expect(consumed >= 0 && consumed <= kept.count)
            switch step {
            case nil:
                #expect(consumed == 0, "needMore must not consume")
                break parsing
            case let outcome?:
                outcomes.append(outcome)
                if outcome.hasPrefix("rejected") { return outcomes }
                #expect(consumed > 0, "an operation must consume its bytes")
                kept.removeFirst(consumed)
            }
        }
    }
    if !kept.isEmpty { outcomes.append("incomplete") }
    return outcomes
}

/// A step in words (nil for `needMore`), reading the ranges from `buffer`.
func describe(_ step: ServerOutputParser.Step, in buffer: UnsafeBufferPointer<UInt8>) -> String? {
    func text(_ range: Range<Int>) -> String { String(decoding: buffer[range], as: UTF8.self) }
    switch step {
    case .needMore: return nil
    case .rejected(let violation): return "rejected \(violation.kind)"
    case .operation(.info(let json)): return "INFO \(text(json))"
    case .operation(.ping): return "PING"
    case .operation(.pong): return "PONG"
    case .operation(.ok): return "+OK"
    case .operation(.error(let message)): return "-ERR \(text(message))"
    case .operation(.message(let frame)):
        let headers = frame.headerBlock.map { "[" + text($0).replacingCRLF() + "]" } ?? "-"
        return
            "MSG \(text(frame.subject)) sid=\(frame.sid) reply=\(frame.replyTo.map(text) ?? "-") headers=\(headers) "
            + "payload=\(text(frame.payload).replacingCRLF())"
    }
}

extension String {
    /// CR and LF made visible, so expected outcomes stay on one line.
    func replacingCRLF() -> String {
        String(
            unicodeScalars.flatMap { scalar -> [Character] in
                scalar == "\r" ? ["\\", "r"] : scalar == "\n" ? ["\\", "n"] : [Character(scalar)]
            })
    }
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
}

@Suite struct ServerOutputParserTests {
    /// Small limits, so that the limit cases stay short: 64-byte control lines, 32-byte messages.
    static let limits = NATSParserLimits(maxControlLineBytes: 64, maxPayloadBytes: 32)

    static let cases: [ParserCase] = [
        // What a server sends.
        ParserCase(
            "INFO", "INFO {\"server_id\":\"S\",\"max_payload\":32}\r\n",
            ["INFO {\"server_id\":\"S\",\"max_payload\":32}"]),
        ParserCase("PING, PONG, +OK", "PING\r\nPONG\r\n+OK\r\n", ["PING", "PONG", "+OK"]),
        ParserCase(
            "operation names in any case", "ping\r\nPoNg\r\n+ok\r\ninfo {}\r\n", ["PING", "PONG", "+OK", "INFO {}"]),
        ParserCase("-ERR with quotes", "-ERR 'Authorization Violation'\r\n", ["-ERR Authorization Violation"]),
        ParserCase("-ERR without quotes", "-ERR Stale Connection\r\n", ["-ERR Stale Connection"]),
        ParserCase("MSG", "MSG orders.1 7 5\r\nhello\r\n", ["MSG orders.1 sid=7 reply=- headers=- payload=hello"]),
        ParserCase(
            "MSG with a reply subject", "MSG a.b 12 _INBOX.x.9 2\r\nhi\r\n",
            ["MSG a.b sid=12 reply=_INBOX.x.9 headers=- payload=hi"]),
        ParserCase("MSG with an empty payload", "MSG a 1 0\r\n\r\n", ["MSG a sid=1 reply=- headers=- payload="]),
        ParserCase(
            "payload containing CRLF and protocol words", "MSG a 1 11\r\nPING\r\nMSG x\r\n",
            ["MSG a sid=1 reply=- headers=- payload=PING\\r\\nMSG x"]),
        ParserCase(
            "HMSG", "HMSG a 3 24 29\r\nNATS/1.0\r\nK: v\r\nL: w\r\n\r\nhello\r\n",
            ["MSG a sid=3 reply=- headers=[NATS/1.0\\r\\nK: v\\r\\nL: w\\r\\n\\r\\n] payload=hello"]),
        ParserCase(
            "HMSG with a reply and a status only (no responders)",
            "HMSG _INBOX.a.1 1 r 16 16\r\nNATS/1.0 503\r\n\r\n\r\n",
            ["MSG _INBOX.a.1 sid=1 reply=r headers=[NATS/1.0 503\\r\\n\\r\\n] payload="]),
        ParserCase(
            "blanks between arguments", "MSG \t a  1\t\t3 \r\nabc\r\n", ["MSG a sid=1 reply=- headers=- payload=abc"]),
        ParserCase(
            "bare LF ends a control line", "PING\nMSG a 1 1\nx\r\n",
            ["PING", "MSG a sid=1 reply=- headers=- payload=x"]),
        ParserCase(
            "pipelined operations", "INFO {}\r\nPING\r\nMSG a 1 1\r\nx\r\nPONG\r\n",
            ["INFO {}", "PING", "MSG a sid=1 reply=- headers=- payload=x", "PONG"]),
        ParserCase(
            "payload exactly at the limit", "MSG a 1 32\r\n" + String(repeating: "p", count: 32) + "\r\n",
            ["MSG a sid=1 reply=- headers=- payload=" + String(repeating: "p", count: 32)]),
        ParserCase(
            "control line exactly at the limit", "-ERR " + String(repeating: "e", count: 59) + "\r\n",
            ["-ERR " + String(repeating: "e", count: 59)]),
        ParserCase("incomplete control line", "MSG a 1", ["incomplete"]),
        ParserCase("incomplete payload", "MSG a 1 5\r\nhel", ["incomplete"]),
        ParserCase("payload without its CRLF yet", "MSG a 1 5\r\nhello", ["incomplete"]),

        // Broken framing.
        ParserCase("unknown operation", "HELLO\r\n", ["rejected unknownOperation"]),
        ParserCase("empty line", "\r\nPING\r\n", ["rejected unknownOperation"]),
        ParserCase("PING with an argument", "PING now\r\n", ["rejected malformedArguments"]),
        ParserCase("INFO without JSON", "INFO\r\n", ["rejected malformedArguments"]),
        ParserCase("MSG with too few arguments", "MSG a 1\r\n", ["rejected malformedArguments"]),
        ParserCase("MSG with too many arguments", "MSG a 1 b c 3\r\nabc\r\n", ["rejected malformedArguments"]),
        ParserCase("HMSG with too few arguments", "HMSG a 1 3\r\nabc\r\n", ["rejected malformedArguments"]),
        ParserCase("a size that is not a number", "MSG a 1 x\r\n", ["rejected malformedArguments"]),
        ParserCase("a negative size", "MSG a 1 -3\r\n", ["rejected malformedArguments"]),
        ParserCase("a sid that is not a number", "MSG a s1 3\r\nabc\r\n", ["rejected malformedArguments"]),
        ParserCase("an overflowing size", "MSG a 1 99999999999999999999\r\n", ["rejected malformedArguments"]),
        ParserCase("header size larger than the total", "HMSG a 1 20 10\r\n", ["rejected malformedArguments"]),
        ParserCase("a message over the limit", "MSG a 1 33\r\n", ["rejected payloadTooLarge"]),
        ParserCase("HMSG over the limit", "HMSG a 1 12 40\r\n", ["rejected payloadTooLarge"]),
        ParserCase("a payload longer than announced", "MSG a 1 3\r\nabcd\r\n", ["rejected missingPayloadTerminator"]),
        ParserCase(
            "a payload shorter than announced", "MSG a 1 5\r\nabc\r\nPING\r\n", ["rejected missingPayloadTerminator"]),
        ParserCase(
            "control line over the limit", "-ERR " + String(repeating: "e", count: 60) + "\r\n",
            ["rejected controlLineTooLong"]),
        ParserCase(
            "control line over the limit, never ended", "INFO " + String(repeating: "{", count: 100),
            ["rejected controlLineTooLong"]),
        ParserCase("a good operation before a bad one", "PING\r\nBOGUS\r\n", ["PING", "rejected unknownOperation"]),
    ]

    @Test(arguments: cases)
    func wholeInput(_ testCase: ParserCase) {
        #expect(parseOutcomes(testCase.input, cuts: []) == testCase.expected)
    }

    @Test(arguments: cases)
    func byteByByte(_ testCase: ParserCase) {
        #expect(parseOutcomes(testCase.input, cuts: Array(0..<testCase.input.count)) == testCase.expected)
    }

    /// Every prefix of every input is also a case: cut once at each offset.
    @Test(arguments: cases)
    func splitAtEveryOffset(_ testCase: ParserCase) {
        for cut in 0...testCase.input.count {
            #expect(parseOutcomes(testCase.input, cuts: [cut]) == testCase.expected, "split at \(cut)")
        }
    }

    @Test func raisingTheLimitAdmitsLargerMessages() {
        let input = Array(("MSG a 1 40\r\n" + String(repeating: "x", count: 40) + "\r\n").utf8)
        #expect(parseOutcomes(input, cuts: []) == ["rejected payloadTooLarge"])
        let raised = NATSParserLimits(maxControlLineBytes: 64, maxPayloadBytes: 40)
        #expect(
            parseOutcomes(input, cuts: [], limits: raised) == [
                "MSG a sid=1 reply=- headers=- payload=" + String(repeating: "x", count: 40)
            ])
    }
}
