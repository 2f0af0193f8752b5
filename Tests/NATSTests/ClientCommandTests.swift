import Testing

@testable import NATS

@Suite struct ClientCommandTests {
    func encoded(_ encode: (inout [UInt8]) -> Void) -> String {
        var buffer: [UInt8] = []
        encode(&buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func encodesEachCommand() throws {
        #expect(
            encoded {
                ClientCommand.publish(
                    subject: "a.b", replyTo: nil, headers: nil, payload: Array("hello".utf8), into: &$0)
            } == "PUB a.b 5\r\nhello\r\n")
        #expect(
            encoded { ClientCommand.publish(subject: "a", replyTo: "_INBOX.x.1", headers: nil, payload: [], into: &$0) }
                == "PUB a _INBOX.x.1 0\r\n\r\n")
        let headers = try (["K": "v"] as NATSHeaders).encoded()
        #expect(
            encoded {
                ClientCommand.publish(
                    subject: "a", replyTo: "r", headers: headers, payload: Array("xy".utf8), into: &$0)
            }
                == "HPUB a r 18 20\r\nNATS/1.0\r\nK: v\r\n\r\nxy\r\n")
        #expect(encoded { ClientCommand.subscribe(subject: "a.*", queue: nil, sid: 12, into: &$0) } == "SUB a.* 12\r\n")
        #expect(
            encoded { ClientCommand.subscribe(subject: "a.>", queue: "workers", sid: 3, into: &$0) }
                == "SUB a.> workers 3\r\n")
        #expect(encoded { ClientCommand.unsubscribe(sid: 1_234_567_890_123, into: &$0) } == "UNSUB 1234567890123\r\n")
        #expect(encoded { ClientCommand.ping(into: &$0) } == "PING\r\n")
        #expect(encoded { ClientCommand.connect(Array("{}".utf8), into: &$0) } == "CONNECT {}\r\n")
    }

    @Test(arguments: [0, 7, 10, 99, 100, 65535, 1 << 40, Int.max])
    func appendsDecimals(_ value: Int) {
        var buffer: [UInt8] = []
        ClientCommand.appendDecimal(value, to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == String(value))
    }

    @Test(arguments: [
        ("a", true), ("a.b.c", true), ("$JS.API.STREAM.INFO.X", true), ("a.*.>", true), ("", false), ("a b", false),
        ("a\tb", false), ("a\r\n", false), (".a", false), ("a.", false), ("a..b", false),
    ])
    func validatesSubjects(_ subject: String, _ valid: Bool) {
        #expect(ClientCommand.isValidSubject(subject) == valid)
    }
}
