import Testing

@testable import NATS

/// The header block in words, or the violation.
func parsedHeaders(_ block: String) -> String {
    let bytes = Array(block.utf8)
    do {
        let headers = try bytes.withUnsafeBufferPointer { buffer throws(NATSProtocolViolation) in
            try NATSHeaders.parse(buffer)
        }
        let status = headers.status.map { " status=\($0)" } ?? ""
        let description = headers.statusDescription.map { " description=\($0)" } ?? ""
        return "ok\(status)\(description) [" + headers.fields.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
            + "]"
    } catch {
        return "malformed"
    }
}

@Suite struct NATSHeadersTests {
    static let blocks: [(String, String)] = [
        ("NATS/1.0\r\n\r\n", "ok []"),
        ("NATS/1.0\r\nA: 1\r\nB:2\r\nA:  3 \r\n\r\n", "ok [A=1,B=2,A=3]"),
        ("NATS/1.0 503\r\n\r\n", "ok status=503 []"),
        (
            "NATS/1.0 404 Message Not Found\r\nNats-Stream: S\r\n\r\n",
            "ok status=404 description=Message Not Found [Nats-Stream=S]"
        ),
        ("NATS/1.0 100 Idle Heartbeat\r\n\r\n", "ok status=100 description=Idle Heartbeat []"),
        ("NATS/1.0\nA: 1\n\n", "ok [A=1]"),
        ("NATS/1.0\r\nEmpty:\r\n\r\n", "ok [Empty=]"),
        ("NATS/1.0\r\nKey: a:b:c\r\n\r\n", "ok [Key=a:b:c]"),
        ("NATS/1.0\r\nValue: caf\u{e9}\r\n\r\n", "ok [Value=caf\u{e9}]"),
        // Malformed: each costs one message, never the connection.
        ("", "malformed"),
        ("NATS/2.0\r\n\r\n", "malformed"),
        ("HTTP/1.1 200\r\n\r\n", "malformed"),
        ("NATS/1.0x\r\n\r\n", "malformed"),
        ("NATS/1.0 50\r\n\r\n", "malformed"),
        ("NATS/1.0 5034\r\n\r\n", "malformed"),
        ("NATS/1.0 503x\r\n\r\n", "malformed"),
        ("NATS/1.0\r\nno colon\r\n\r\n", "malformed"),
        ("NATS/1.0\r\n: empty name\r\n\r\n", "malformed"),
        ("NATS/1.0\r\nBad Name: v\r\n\r\n", "malformed"),
        ("NATS/1.0\r\nA: b\u{1}c\r\n\r\n", "malformed"),
        ("NATS/1.0\r\nA: b\rc\r\n\r\n", "malformed"),
        ("NATS/1.0\r\nA: 1\r\n", "malformed"),
        ("NATS/1.0\r\n\r\nextra", "malformed"),
        ("NATS/1.0\r\n\r\n\r\n", "malformed"),
    ]

    @Test(arguments: blocks)
    func parsesOrRefusesAHeaderBlock(_ block: String, _ expected: String) {
        #expect(parsedHeaders(block) == expected)
    }

    @Test func encodedHeadersParseBackToTheSameFields() throws {
        var headers: NATSHeaders = ["Nats-Msg-Id": "order-17", "Nats-Expected-Last-Subject-Sequence": "4"]
        headers.append("Multi", "1")
        headers.append("Multi", "2")
        let encoded = try headers.encoded()
        #expect(
            String(decoding: encoded, as: UTF8.self)
                == "NATS/1.0\r\nNats-Msg-Id: order-17\r\nNats-Expected-Last-Subject-Sequence: 4\r\nMulti: 1\r\n"
                + "Multi: 2\r\n\r\n"
        )
        #expect(
            parsedHeaders(String(decoding: encoded, as: UTF8.self))
                == "ok [Nats-Msg-Id=order-17,Nats-Expected-Last-Subject-Sequence=4,Multi=1,Multi=2]")
    }

    @Test func namesMatchWithoutRegardToCaseAndSettingReplacesEveryValue() {
        var headers: NATSHeaders = ["KV-Operation": "DEL"]
        headers.append("kv-operation", "PURGE")
        #expect(headers["kv-OPERATION"] == "DEL")
        #expect(headers.values(for: "KV-Operation") == ["DEL", "PURGE"])
        headers["KV-Operation"] = "PUT"
        #expect(headers.fields.map(\.value) == ["PUT"])
        headers["KV-Operation"] = nil
        #expect(headers.isEmpty)
    }

    @Test(arguments: [
        ("Bad Name", "v"), ("Colon:Name", "v"), ("", "v"), ("Name", "line\r\nbreak"), ("Name", "lf\nonly"),
    ])
    func refusesHeadersThatCannotBeSent(_ name: String, _ value: String) {
        let headers: NATSHeaders = [name: value]
        #expect(throws: NATSError.self) { try headers.encoded() }
        #expect(throws: NATSError.self) { try PublishOptions(expectedLastSubjectSequence: 1).encodedHeaders(headers) }
    }

    static let publishCases: [(PublishOptions, NATSHeaders?)] = [
        (PublishOptions(), nil),
        (PublishOptions(), ["Reactor-Batch": "i.7"]),
        (PublishOptions(expectedLastSubjectSequence: 0), ["Reactor-Batch": "i.7"]),
        (PublishOptions(messageID: "m", expectedLastSubjectSequence: 18_446_744_073_709_551), nil),
        (
            PublishOptions(
                messageID: "m", expectedStream: "S", expectedLastSequence: 3, expectedLastSubjectSequence: 4,
                expectedLastMessageID: "p"), ["A": "1", "B": "2"]
        ),
        (PublishOptions(messageID: "new"), ["nats-msg-id": "old", "C": "3"]),
    ]

    /// The publish path's one-pass encoding gives the bytes the general one gives, options replacing given fields.
    @Test(arguments: publishCases)
    func publishHeadersEncodeInOnePassAsTheFieldsWould(_ options: PublishOptions, _ headers: NATSHeaders?) throws {
        #expect(try options.encodedHeaders(headers) == options.apply(to: headers)?.encoded())
    }

    static let acknowledgements: [(String, PubAck?)] = [
        (#"{"stream":"bench-records","seq":41}"#, PubAck(stream: "bench-records", sequence: 41, duplicate: false)),
        // nats-server's own spelling (2.9 and later): a space after the comma.
        (#"{"stream":"bench-records", "seq":41}"#, PubAck(stream: "bench-records", sequence: 41, duplicate: false)),
        (
            #"{"stream":"S", "seq":1234567890123456789}"#,
            PubAck(stream: "S", sequence: 1_234_567_890_123_456_789, duplicate: false)
        ),
        (#"{"stream":"S",  "seq":1}"#, nil),
        (#"{"stream":"S", "seq":1, "duplicate":true}"#, nil),
        (#"{"stream":"S", "domain":"d", "seq":1}"#, nil),
        (#"{"stream":"S", "seq":}"#, nil),
        (#"{"stream":"S","seq":18446744073709551615}"#, nil),
        (#"{"stream":"S","seq":1,"duplicate":true}"#, nil),
        (#"{"stream":"S","domain":"d","seq":1}"#, nil),
        (#"{"stream":"S\"x","seq":1}"#, nil),
        (#"{"stream":"","seq":1}"#, nil),
        (#"{"stream":"S","seq":}"#, nil),
        (#"{"stream":"S","seq":-1}"#, nil),
        (#"{"error":{"code":400,"err_code":10071}}"#, nil),
        (#"{"stream":"S","seq":1} "#, nil),
    ]

    /// Only the plain acknowledgement is read without the JSON parser; anything else is left to it.
    @Test(arguments: acknowledgements)
    func readsThePlainAcknowledgementWithoutAJSONTree(_ text: String, _ expected: PubAck?) {
        #expect(PubAck(plain: Array(text.utf8)) == expected)
    }
}
