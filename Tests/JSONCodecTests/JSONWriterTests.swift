import JSONCodec
import Testing

@Suite struct JSONWriterTests {
    @Test(arguments: [
        (JSONValue.string("plain"), #""plain""#),
        (.string("q\"b\\s/"), #""q\"b\\s/""#),
        (.string("\n\r\t\u{8}\u{C}"), #""\n\r\t\b\f""#),
        (.string("\u{0}\u{1F}\u{7F}"), "\"\\u0000\\u001f\u{7F}\""),
        (.string("é😀\u{2028}"), "\"é😀\u{2028}\""),
        (.array([]), "[]"),
        (.object(JSONObject()), "{}"),
        (["b": 1, "a": [true, false, nil]] as JSONValue, #"{"b":1,"a":[true,false,null]}"#),
    ])
    func writesCompactJSON(value: JSONValue, text: String) {
        #expect(value.serializedString() == text)
        #expect(value.serialized() == Array(text.utf8))
    }

    @Test(arguments: [
        #"{"a":[1,-2,3.5,"x\u0000y",{"b":null}],"c":true}"#,
        #""\ud83d\ude00 \u00e9 \\ \" \/""#,
        "[18446744073709551615,-9223372036854775808,1e-07,-0.0]",
    ])
    func parseWriteParseIsStable(text: String) throws {
        let value = try JSONParser().parse(Array(text.utf8))
        let written = value.serialized()
        #expect(try JSONParser().parse(written) == value)
        #expect(try JSONParser().parse(written).serialized() == written)
    }

    /// Integers around each change in the number of digits, and the largest: as Swift prints them.
    @Test(arguments: [0, 9, 10, 99, 100, 4_321, 9_999_999, 99_999_999, 100_000_000, 123_456_789_012, UInt64.max])
    func writesIntegersAsSwiftPrintsThem(_ value: UInt64) {
        var out = JSONWriter(capacity: 4)
        out.integer(value)
        #expect(String(decoding: out.bytes, as: UTF8.self) == "\(value)")
    }

    /// Built member by member, as the server's answers are: the same bytes as the value written whole.
    @Test func membersWrittenOneByOneMatchTheWholeValue() throws {
        var out = JSONWriter(capacity: 8)
        out.raw("{")
        out.key("seq")
        out.integer(UInt64.max)
        out.raw(",\"min\":")
        out.integer(Int64.min)
        out.raw(",\"zero\":")
        out.integer(0)
        out.raw(",\"ok\":")
        out.bool(true)
        out.raw(",\"name\":")
        out.string("a\"b\u{1}")
        out.raw(",\"state\":")
        out.raw(Array(#"{"value":1}"#.utf8))
        out.raw("}")
        let text =
            #"{"seq":18446744073709551615,"min":-9223372036854775808,"zero":0,"ok":true,"#
            + #""name":"a\"b\u0001","state":{"value":1}}"#
        #expect(String(decoding: out.bytes, as: UTF8.self) == text)
        #expect(try JSONParser().parse(out.bytes).serialized() == out.bytes)
        #expect(JSONWriter.quoted("say \"hi\"\n") == #""say \"hi\"\n""#)
    }

    @Test func surrogatePairsDecodeToOneScalar() throws {
        #expect(try JSONParser().parse(Array(#""\uD83D\uDE00""#.utf8)) == .string("😀"))
        #expect(try JSONParser().parse(Array(#""\u00E9\u0000""#.utf8)) == .string("é\u{0}"))
    }
}

@Suite struct JSONObjectTests {
    @Test func keepsOrderAndReplacesRepeatedKeysInPlace() {
        var object = JSONObject([("b", 1), ("a", 2), ("b", 3)])
        #expect(object.keys == ["b", "a"])
        #expect(object["b"] == 3)
        object["c"] = 4
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
        #expect(Array(object.map(\.key)) == ["a", "c"])
    }

    @Test func equalityAndHashIgnoreOrder() {
        let one: JSONObject = ["a": 1, "b": [true]]
        let two: JSONObject = ["b": [true], "a": 1]
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(one != ["a": 1, "b": [false]])
        #expect(one != ["a": 1])
    }

    @Test func largeObjectsStayConsistentAcrossEdits() throws {
        var object = JSONObject()
        for position in 0..<100 { object["k\(position)"] = .number(.int(Int64(position))) }
        object["k5"] = nil
        object["k50"] = "x"
        #expect(object.count == 99)
        #expect(object["k5"] == nil)
        #expect(object["k50"] == "x")
        #expect(object["k99"] == 99)
        #expect(object.keys.first == "k0")
        let text = JSONValue.object(object).serialized()
        #expect(try JSONParser().parse(text) == .object(object))
        let duplicate =
            Array(#"{"#.utf8) + Array((0..<40).map { "\"k\($0)\":0," }.joined().utf8) + Array(#""k7":1}"#.utf8)
        #expect(throws: JSONParseError.self) { try JSONParser().parse(duplicate) }
    }
}
