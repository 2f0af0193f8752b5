import ReactorClient
import Testing

/// What feeding `input` in pieces cut at `cuts` produced: each event or rejection with the input offset at
/// which the parser reported it, then the parser's final last event ID and retry. Contract breaches (bytes
/// left unconsumed on "need more", anything after a rejection) show up as outcomes too.
func parseEvents(
    _ input: [UInt8], cuts: [Int], limits: ServerSentEventParser.Limits = ServerSentEventParserTests.limits
) -> (outcomes: [(text: String, offset: Int)], final: String) {
    var parser = ServerSentEventParser(limits: limits)
    var outcomes: [(String, Int)] = []
    var start = 0
    feeding: for end in cuts + [input.count] where end >= start {
        var position = start
        while true {
            let (consumed, step) = input[position..<end].withUnsafeBytes { parser.parse($0) }
            position += consumed
            switch step {
            case .needMore:
                if position != end { outcomes.append(("left \(end - position) bytes on needMore", position)) }
                break
            case .event(let event):
                outcomes.append((describe(event), position))
                continue
            case .rejected(let rejection):
                outcomes.append(("rejected \(rejection)", position))
                if case .needMore = input[position..<input.count].withUnsafeBytes({ parser.parse($0).step }) {
                    outcomes.append(("parsed again after a rejection", position))
                }
                break feeding
            }
            break
        }
        start = end
    }
    let retry =
        parser.reconnectionTime.map {
            String($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)
        } ?? "nil"
    return (outcomes, "last=\(parser.lastEventID) retry=\(retry)")
}

/// `type[lastEventID] data`, with LF shown as ⏎ so a table row stays on one line.
func describe(_ event: ServerSentEvent) -> String {
    "\(event.type)[\(event.lastEventID)] \(event.data.replacingOccurrences(of: "\n", with: "⏎"))"
}

struct StreamCase: CustomTestStringConvertible, Sendable {
    var name: String
    var input: [UInt8]
    /// The events (or rejection) in order, then `last=… retry=…`.
    var expected: [String]
    var testDescription: String { name }

    init(_ name: String, _ input: String, _ expected: [String]) {
        self.init(name, bytes: Array(input.utf8), expected)
    }

    init(_ name: String, bytes: [UInt8], _ expected: [String]) {
        self.name = name
        self.input = bytes
        self.expected = expected
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
let none = "last= retry=nil"

@Suite struct ServerSentEventParserTests {
    static let limits = ServerSentEventParser.Limits(maxLineBytes: 64, maxEventBytes: 64)

    static let cases: [StreamCase] = [
        // Fields and dispatch.
        StreamCase("one event", "data: a\n\n", ["message[] a", none]),
        StreamCase("data lines join with LF", "data: YHOO\ndata: +2\ndata: 10\n\n", ["message[] YHOO⏎+2⏎10", none]),
        StreamCase("no space after the colon", "data:a\n\n", ["message[] a", none]),
        StreamCase("only one leading space is stripped", "data:  a \n\n", ["message[]  a ", none]),
        StreamCase("a colon inside the value", "data: a: b\n\n", ["message[] a: b", none]),
        StreamCase(
            "comments and an id reset (the standard's example)",
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
            ["message[1] first event", "message[] second event", "message[]  third event", none]),
        StreamCase(
            "fields without colon (the standard's example)", "data\n\ndata\ndata\n\ndata:",
            ["message[] ", "message[] ⏎", none]),
        StreamCase(
            "the same event twice (the standard's example)", "data:test\n\ndata: test\n\n",
            ["message[] test", "message[] test", none]),
        StreamCase("a trailing empty data line keeps one LF", "data: a\ndata:\n\n", ["message[] a⏎", none]),
        StreamCase("blank lines without data dispatch nothing", "\n\n\ndata: a\n\n\n\n", ["message[] a", none]),
        StreamCase("a comment only", ": keep-alive\n\n", [none]),
        StreamCase("unknown fields are ignored", "foo: bar\nretryx: 5\ndata: a\n\n", ["message[] a", none]),
        StreamCase("field names are case-sensitive", "Data: a\nDATA: b\n\n", [none]),
        StreamCase("a space before the colon makes another field", "data : a\n\n", [none]),
        StreamCase("an event cut off by the end is discarded", "data: a\n\ndata: b\n", ["message[] a", none]),
        StreamCase("NUL stays in data", "data: a\u{0}b\n\n", ["message[] a\u{0}b", none]),

        // Event types.
        StreamCase(
            "named events (the standard's example)",
            "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
            ["add[] 73857293", "remove[] 2153", "add[] 113411", none]),
        StreamCase("an empty type is message", "event:\ndata: x\n\n", ["message[] x", none]),
        StreamCase(
            "the type resets after each event", "event: a\ndata: 1\n\ndata: 2\n\n", ["a[] 1", "message[] 2", none]),
        StreamCase("a type without data is dropped with it", "event: a\n\ndata: 2\n\n", ["message[] 2", none]),
        StreamCase("the last type of a block wins", "event: a\nevent: b\ndata: 1\n\n", ["b[] 1", none]),

        // Line ends.
        StreamCase("CRLF", "data: a\r\ndata: b\r\n\r\n", ["message[] a⏎b", none]),
        StreamCase("CR alone", "data: a\rdata: b\r\r", ["message[] a⏎b", none]),
        StreamCase(
            "mixed line ends", "data: a\r\n\rdata: b\n\r\ndata: c\r\r\n",
            ["message[] a", "message[] b", "message[] c", none]),
        StreamCase("LF CR is two line ends", "data: a\n\r", ["message[] a", none]),
        StreamCase(
            "CR CR LF is a line end and one blank line", "data: a\r\r\ndata: b\r\n\r\n",
            ["message[] a", "message[] b", none]),
        StreamCase("a CR in the value region ends the line", "data: a\rb\n\n", ["message[] a", none]),

        // Byte order mark and UTF-8.
        StreamCase("a leading BOM is skipped", bytes: bom + Array("data: a\n\n".utf8), ["message[] a", none]),
        StreamCase(
            "a second BOM is part of the first field name", bytes: bom + bom + Array("data: a\n\ndata: b\n\n".utf8),
            ["message[] b", none]),
        StreamCase(
            "a BOM later in the stream is not skipped",
            bytes: Array("data: a\n\n".utf8) + bom + Array("data: b\n\n".utf8), ["message[] a", none]),
        StreamCase("a BOM before a blank line", bytes: bom + Array("\ndata: a\n\n".utf8), ["message[] a", none]),
        StreamCase("a partial BOM is not a BOM", bytes: [0xEF, 0xBB] + Array("data: a\n\n".utf8), [none]),
        StreamCase("UTF-8 text", "data: é€😀\n\n", ["message[] é€😀", none]),
        StreamCase(
            "an invalid byte is U+FFFD", bytes: Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8),
            ["message[] a\u{FFFD}b", none]),
        StreamCase(
            "a sequence cut by the line end is one U+FFFD",
            bytes: Array("data: ".utf8) + [0xE2, 0x82] + Array("\ndata: x\n\n".utf8),
            ["message[] \u{FFFD}⏎x", none]),

        // The last event ID.
        StreamCase(
            "an id persists across events", "id: 1\ndata: a\n\ndata: b\n\n",
            ["message[1] a", "message[1] b", "last=1 retry=nil"]),
        StreamCase(
            "an empty id resets it, with or without colon",
            "id: 1\ndata: a\n\nid\ndata: b\n\nid: 2\ndata: c\n\nid:\ndata: d\n\n",
            ["message[1] a", "message[] b", "message[2] c", "message[] d", none]),
        StreamCase(
            "an id holding NUL is ignored", "id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n",
            ["message[1] a", "message[1] b", "last=1 retry=nil"]),
        StreamCase(
            "an id after data applies to that event", "data: a\nid: 3\n\n", ["message[3] a", "last=3 retry=nil"]),
        StreamCase("a blank line without data still sets the last event ID", "id: 7\n\n", ["last=7 retry=nil"]),
        StreamCase("an id takes effect only at the blank line", "id: 7\ndata: a", [none]),
        StreamCase(
            "an id keeps its spaces after the first", "id:  4 \ndata: a\n\n", ["message[ 4 ] a", "last= 4  retry=nil"]),

        // Retry.
        StreamCase("retry in milliseconds", "retry: 2500\n", ["last= retry=2500"]),
        StreamCase("retry with an event", "retry: 10\ndata: x\n\n", ["message[] x", "last= retry=10"]),
        StreamCase("retry with a letter is ignored", "retry: 1a\n", [none]),
        StreamCase("retry with a sign is ignored", "retry: -1\nretry: +1\n", [none]),
        StreamCase("retry with a fraction is ignored", "retry: 1.5\n", [none]),
        StreamCase("an empty retry is ignored", "retry:\nretry\nretry: \n", [none]),
        StreamCase("retry with two leading spaces is ignored", "retry:  5\n", [none]),
        StreamCase(
            "a later valid retry wins, an invalid one keeps the last", "retry: 100\nretry: x\nretry: 200\nretry: y\n",
            ["last= retry=200"]),
        StreamCase("leading zeros are decimal", "retry: 010\n", ["last= retry=10"]),
        StreamCase("a huge retry saturates", "retry: 99999999999999999999999\n", ["last= retry=9223372036854775807"]),

        // What this server sends.
        StreamCase(
            "states, a keep-alive, a pulse, an end",
            "event: state\nid: 3\ndata: {\"value\":3}\n\n: keep-alive\n\n"
                + "event: pulse\ndata: {\"name\":\"alert\",\"value\":\"x\",\"count\":1}\n\n"
                + "event: end\ndata: {\"reason\":\"session deleted\"}\n\n",
            [
                "state[3] {\"value\":3}", "pulse[3] {\"name\":\"alert\",\"value\":\"x\",\"count\":1}",
                "end[3] {\"reason\":\"session deleted\"}", "last=3 retry=nil",
            ]),

        // Limits (64-byte lines and 64-byte events in this table).
        StreamCase(
            "a line at the limit", "data: " + String(repeating: "a", count: 58) + "\n\n",
            ["message[] " + String(repeating: "a", count: 58), none]),
        StreamCase(
            "a line over the limit", "data: " + String(repeating: "a", count: 59) + "\n\n",
            ["rejected lineTooLong(limit: 64)", none]),
        StreamCase(
            "a line over the limit, never ended", ": " + String(repeating: "c", count: 100),
            ["rejected lineTooLong(limit: 64)", none]),
        StreamCase(
            "an event at the limit",
            String(repeating: "data: " + String(repeating: "b", count: 15) + "\n", count: 4) + "\n",
            [
                "message[] " + Array(repeating: String(repeating: "b", count: 15), count: 4).joined(separator: "⏎"),
                none,
            ]),
        StreamCase(
            "an event over the limit",
            String(repeating: "data: " + String(repeating: "b", count: 16) + "\n", count: 4) + "\n",
            ["rejected eventTooLarge(limit: 64)", none]),
        StreamCase(
            "events before a rejection are kept", "data: a\n\n" + ": " + String(repeating: "c", count: 70) + "\n",
            ["message[] a", "rejected lineTooLong(limit: 64)", none]),
    ]

    @Test(arguments: cases)
    func wholeStream(_ testCase: StreamCase) {
        let run = parseEvents(testCase.input, cuts: [])
        #expect(run.outcomes.map(\.text) + [run.final] == testCase.expected)
    }

    @Test(arguments: cases)
    func byteByByte(_ testCase: StreamCase) {
        let run = parseEvents(testCase.input, cuts: Array(0..<testCase.input.count))
        #expect(run.outcomes.map(\.text) + [run.final] == testCase.expected)
    }

    @Test(arguments: cases)
    func splitAtEveryOffset(_ testCase: StreamCase) {
        let whole = parseEvents(testCase.input, cuts: [])
        for cut in 0...testCase.input.count {
            let run = parseEvents(testCase.input, cuts: [cut])
            #expect(run.outcomes.map(\.text) == whole.outcomes.map(\.text), "split at \(cut)")
            #expect(run.outcomes.map(\.offset) == whole.outcomes.map(\.offset), "split at \(cut)")
            #expect(run.final == whole.final, "split at \(cut)")
        }
    }

    /// Every prefix is a stream of its own that ends there: it yields exactly the events the whole stream had
    /// yielded by that offset, and nothing for an event its end cut off.
    @Test(arguments: cases)
    func everyPrefix(_ testCase: StreamCase) {
        let whole = parseEvents(testCase.input, cuts: [])
        for length in 0...testCase.input.count {
            let prefix = parseEvents(Array(testCase.input[..<length]), cuts: [])
            #expect(
                prefix.outcomes.map(\.text) == whole.outcomes.filter { $0.offset <= length }.map(\.text),
                "prefix of \(length) bytes")
        }
    }

    @Test func eventsAreReportedOneAtATimeWithTheBytesTheyUsed() {
        var parser = ServerSentEventParser()
        let input = Array("data: a\n\ndata: b\n\ndata: c".utf8)
        let first = input.withUnsafeBytes { parser.parse($0) }
        #expect(first.consumed == 9)
        #expect(first.step == .event(ServerSentEvent(data: "a")))
        let second = input[9...].withUnsafeBytes { parser.parse($0) }
        #expect(second.consumed == 9)
        #expect(second.step == .event(ServerSentEvent(data: "b")))
        let rest = input[18...].withUnsafeBytes { parser.parse($0) }
        #expect(rest.consumed == 7)
        #expect(rest.step == .needMore)
    }

    @Test func theSeedIsTheLastEventIDUntilTheFirstBlankLine() {
        var parser = ServerSentEventParser(lastEventID: "41")
        _ = Array("data: a\n".utf8).withUnsafeBytes { parser.parse($0) }
        #expect(parser.lastEventID == "41")
        // The new stream's id buffer starts empty: its first dispatch replaces the seed (as an EventSource's would).
        let step = Array("\n".utf8).withUnsafeBytes { parser.parse($0).step }
        #expect(step == .event(ServerSentEvent(data: "a", lastEventID: "")))
        #expect(parser.lastEventID == "")
    }

    @Test func defaultLimitsHoldStatesOfSeveralMegabytes() {
        let limits = ServerSentEventParser.Limits()
        #expect(limits.maxLineBytes == 16 << 20)
        #expect(limits.maxEventBytes == 16 << 20)
    }
}
