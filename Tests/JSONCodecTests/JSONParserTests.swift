import JSONCodec
import Testing

private func parse(_ text: String, maxDepth: Int = 64, maxBytes: Int = 1 << 20) throws(JSONParseError) -> JSONValue {
    try JSONParser(maxDepth: maxDepth, maxBytes: maxBytes).parse(Array(text.utf8))
}

private func parseError(_ bytes: [UInt8], maxDepth: Int = 64) -> JSONParseError? {
    do {
        _ = try JSONParser(maxDepth: maxDepth).parse(bytes)
        return nil
    } catch {
        return error
    }
}

@Suite struct JSONParserTests {
    @Test(arguments: [
        ("null", JSONValue.null),
        ("true", .bool(true)),
        ("false", .bool(false)),
        (" \t\r\n0 \n", .number(.int(0))),
        ("\"\"", .string("")),
        ("[]", .array([])),
        ("{}", .object(JSONObject())),
        ("[1,\"a\",null,true,{}]", .array([1, "a", nil, true, .object(JSONObject())])),
        (#"{"a":{"b":[1,2]},"c":"d"}"#, ["a": ["b": [1, 2]], "c": "d"] as JSONValue),
        (" { \"a\" : 1 , \"b\" : [ ] } ", ["a": 1, "b": []] as JSONValue),
    ])
    func acceptsValidDocuments(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
        // Every proper prefix that does not end inside a top-level number is incomplete, hence an error.
        let bytes = Array(text.utf8)
        let trimmedEnd = bytes.lastIndex { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }.map { $0 + 1 } ?? 0
        guard case .number = expected else {
            for end in 0..<trimmedEnd {
                #expect(
                    parseError(Array(bytes[..<end])) != nil,
                    "prefix \(String(decoding: bytes[..<end], as: UTF8.self)) parsed")
            }
            return
        }
    }

    /// Each invalid document with the reason and the exact byte offset the parser must report.
    @Test(arguments: [
        ("", JSONParseError.Reason.unexpectedEnd, 0),
        ("   ", .unexpectedEnd, 3),
        ("}", .unexpectedByte, 0),
        ("[1,]", .unexpectedByte, 3),
        (#"{"a":1,}"#, .unexpectedByte, 7),
        ("[1 2]", .unexpectedByte, 3),
        (#"{"a" 1}"#, .unexpectedByte, 5),
        (#"{a:1}"#, .unexpectedByte, 1),
        (#"{"a":1 "b":2}"#, .unexpectedByte, 7),
        ("[", .unexpectedEnd, 1),
        ("[1", .unexpectedEnd, 2),
        (#"{"a":"#, .unexpectedEnd, 5),
        ("\"abc", .unexpectedEnd, 4),
        ("tru", .unexpectedEnd, 3),
        ("trUe", .unexpectedByte, 2),
        ("nul", .unexpectedEnd, 3),
        ("NaN", .unexpectedByte, 0),
        ("Infinity", .unexpectedByte, 0),
        ("-Infinity", .invalidNumber, 1),
        ("01", .invalidNumber, 1),
        ("-01", .invalidNumber, 2),
        ("1.", .unexpectedEnd, 2),
        ("1.e3", .invalidNumber, 2),
        (".5", .unexpectedByte, 0),
        ("+1", .unexpectedByte, 0),
        ("1e", .unexpectedEnd, 2),
        ("1e+", .unexpectedEnd, 3),
        ("1ex", .invalidNumber, 2),
        ("-", .unexpectedEnd, 1),
        ("0x10", .trailingData, 1),
        ("1 2", .trailingData, 2),
        ("{} x", .trailingData, 3),
        ("1e400", .numberOutOfRange, 0),
        ("[-1e400]", .numberOutOfRange, 1),
        (#""\x""#, .invalidEscape, 2),
        (#""\u12G4""#, .invalidEscape, 5),
        (#""\u12"#, .unexpectedEnd, 5),
        (#""\uD800""#, .invalidSurrogate, 1),
        (#""\uD800\u0041""#, .invalidSurrogate, 7),
        (#""\uDC00""#, .invalidSurrogate, 1),
        (#""ab\"#, .unexpectedEnd, 4),
        ("\"a\tb\"", .controlCharacter, 2),
        ("\"\n\"", .controlCharacter, 1),
        (#"{"a":1,"a":2}"#, .duplicateKey, 7),
        ("// c\n1", .unexpectedByte, 0),
        ("[1]//", .trailingData, 3),
        ("'a'", .unexpectedByte, 0),
    ])
    func rejectsInvalidDocuments(text: String, reason: JSONParseError.Reason, offset: Int) {
        let error = parseError(Array(text.utf8))
        #expect(error?.reason == reason)
        #expect(error?.offset == offset)
    }

    @Test(arguments: [
        ([0xEF, 0xBB, 0xBF, 0x31] as [UInt8], JSONParseError.Reason.unexpectedByte, 0),  // byte-order mark
        ([0x22, 0xC3, 0x22] as [UInt8], .invalidUTF8, 2),  // truncated two-byte sequence
        ([0x22, 0xC0, 0xAF, 0x22] as [UInt8], .invalidUTF8, 1),  // overlong '/'
        ([0x22, 0xE0, 0x80, 0xAF, 0x22] as [UInt8], .invalidUTF8, 2),  // overlong three-byte
        ([0x22, 0xED, 0xA0, 0x80, 0x22] as [UInt8], .invalidUTF8, 2),  // UTF-8-encoded surrogate
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22] as [UInt8], .invalidUTF8, 2),  // beyond U+10FFFF
        ([0x22, 0xFF, 0x22] as [UInt8], .invalidUTF8, 1),
        ([0x22, 0x80, 0x22] as [UInt8], .invalidUTF8, 1),  // lone continuation byte
        ([0x22, 0xE2, 0x82] as [UInt8], .unexpectedEnd, 3),
        ([0x22, 0x61, 0x00, 0x22] as [UInt8], .controlCharacter, 2),
        ([0x5B, 0xC3, 0xA9, 0x5D] as [UInt8], .unexpectedByte, 1),  // non-ASCII outside a string
    ])
    func rejectsInvalidBytes(bytes: [UInt8], reason: JSONParseError.Reason, offset: Int) {
        let error = parseError(bytes)
        #expect(error?.reason == reason)
        #expect(error?.offset == offset)
    }

    @Test func everyProperPrefixOfAValidDocumentIsAnError() throws {
        let document = #"{"a":[1,-2.5e3,true,false,null,"x\n\u00e9\ud83d\ude00"],"b":{"c":{}}}"#
        let bytes = Array(document.utf8)
        _ = try JSONParser().parse(bytes)
        for end in 0..<bytes.count {
            // "{"a":[1,-2.5e3" ... a prefix is never a complete document here, because the top level is an object.
            #expect(parseError(Array(bytes[..<end])) != nil, "prefix of \(end) bytes parsed")
        }
    }

    @Test(arguments: [
        ("[}", "unexpected '}' at byte 1: expected a value"),
        ("{\"a\":1,}", "unexpected '}' at byte 7: expected a member name (trailing commas are not allowed)"),
        ("", "unexpected end of input at byte 0: expected a value"),
        ("[1\n", "unexpected end of input at byte 3: expected ',' or ']'"),
        ("[1\t2]", "unexpected '2' at byte 3: expected ',' or ']'"),
        ("[\u{7}]", "unexpected byte 0x07 at byte 1: expected a value"),
        ("{\"a\":1,\"a\":2}", "duplicate member \"a\" at byte 7: each name may appear once"),
        ("01", "unexpected '1' at byte 1: leading zeros are not allowed in numbers"),
        ("1e999", "number 1e999 at byte 0 is too large to represent"),
    ])
    func messagesSayWhatAndWhere(text: String, message: String) {
        #expect(parseError(Array(text.utf8))?.message == message)
    }

    @Test func theEmptyArrayMessageMatchesTheBrief() {
        // "unexpected '}' at byte 12: expected a value" is the brief's example shape.
        #expect(parseError(Array(#"{"a":[1,2,3,}"#.utf8))?.message == "unexpected '}' at byte 12: expected a value")
    }

    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try parse(ok) != .null)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        let error = parseError(Array(deep.utf8))
        #expect(error?.reason == .depthLimitExceeded)
        #expect(error?.offset == 64)
        #expect(parseError(Array(#"{"a":{"b":1}}"#.utf8), maxDepth: 1)?.reason == .depthLimitExceeded)
        #expect(parseError(Array(#"{"a":1}"#.utf8), maxDepth: 1) == nil)
        // A very deep document fails fast without exhausting the stack.
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(parseError(Array(hostile.utf8))?.reason == .depthLimitExceeded)
    }

    @Test func sizeLimit() {
        #expect(throws: JSONParseError.self) { try parse("[1,2,3]", maxBytes: 6) }
        #expect((try? parse("[1,2,3]", maxBytes: 7)) != nil)
        do {
            _ = try parse("    1", maxBytes: 4)
            Issue.record("accepted a document over the limit")
        } catch {
            #expect(error.reason == .inputTooLarge)
        }
    }

    @Test func parsesNonContiguousCollections() throws {
        let bytes = #"{"a":[true]}"#.utf8  // String.UTF8View: not necessarily contiguous storage
        #expect(try JSONParser().parse(bytes) == ["a": [true]])
        #expect(try JSONParser().parse(Array(#"[1]"#.utf8)[...]) == [1])
        #expect(try JSONParser().parse(Array(#"[1]"#.utf8).reversed().reversed()) == [1])
    }

    /// Duplicate detection switches from a scan to a set past a dozen members: check both sides.
    @Test(arguments: [1, 11, 12, 13, 14, 40])
    func duplicateKeysAtEverySize(unique: Int) throws {
        let members = (0..<unique).map { "\"k\($0)\":\($0)" }
        let valid = "{" + members.joined(separator: ",") + "}"
        #expect(try parse(valid).objectValue?.count == unique)
        for repeated in [0, unique - 1] {
            let text = "{" + (members + ["\"k\(repeated)\":0"]).joined(separator: ",") + "}"
            let error = parseError(Array(text.utf8))
            #expect(error?.reason == .duplicateKey)
            #expect(error?.offset == text.utf8.count - "\"k\(repeated)\":0}".utf8.count)
        }
    }

    @Test func nestedContainersKeepTheirOwnMembers() throws {
        let text = #"{"a":{"b":1,"c":[{"d":2},[3,{"e":[]}]]},"f":[{"a":1}],"g":{}}"#
        let value = try parse(text)
        #expect(value.serializedString() == text)
        #expect(value["a"]?["c"]?[1]?[1]?["e"] == [])
    }

    /// A sample of JSONTestSuite's y_ (must accept) cases.
    @Test(arguments: [
        #"[[]   ]"#, #"[""]"#, #"[]"#, #"["a"]"#, #"[false]"#, #"[null, 1, "1", {}]"#, #"[null]"#, "[1\n]", " [1]",
        "[1,null,null,null,2]", "[2] ", #"[123e65]"#, #"[0e+1]"#, #"[0e1]"#, #"[ 4]"#,
        #"[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]"#,
        #"[20e1]"#, #"[-0]"#, #"[-123]"#, #"[-1]"#, #"[1E22]"#, #"[1E-2]"#, #"[1E+2]"#, #"[123e45]"#, #"[123.456e78]"#,
        #"[1e-2]"#, #"[1e+2]"#, #"[123]"#, #"[123.456789]"#, #"{"asd":"sdf", "dfg":"fgh"}"#, #"{"asd":"sdf"}"#,
        #"{"a":[]}"#,
        #"{"title":"\u041f\u043e\u043b\u0442\u043e\u0440\u0430 "#
            + #"\u0417\u0435\u043c\u043b\u0435\u043a\u043e\u043f\u0430" }"#,
        "{\n\"a\": \"b\"\n}", #"["\u0060\u012a\u12AB"]"#, #"["\uD801\udc37"]"#, #"["\ud83d\ude39\ud83d\udc8d"]"#,
        #"["\"\\\/\b\f\n\r\t"]"#, #"["\\u0000"]"#, #"["\""]"#, #"["a/*b*/c/*d//e"]"#, #"["\\a"]"#, #"["\\n"]"#,
        #"["\u0012"]"#, #"["\uFFFF"]"#, #"["asd"]"#, #"[ "asd"]"#, #"["\uDBFF\uDFFF"]"#, #"["new\u00A0line"]"#,
        "[\"\u{7F}\"]", #"["\u0000"]"#, #"["\u002c"]"#, #"["π"]"#, #"["𛿿"]"#, #"["asd "]"#, #"" ""#,
        #"["\uD834\uDd1e"]"#,
        #"["\u0821"]"#, #"["\u0123"]"#, "[\"\u{2028}\"]", "[\"\u{2029}\"]", #"["\u0061\u30af\u30EA\u30b9"]"#,
        #"["new\u000Aline"]"#, #"["\u200B"]"#, #"["\u2064"]"#, #"["\uFDD0"]"#, #"["\uFFFE"]"#, #"["\u005C"]"#,
        #"["⍂㈴⍂"]"#,
        #"["\uD834\uDD1E"]"#, "false", "42", "-0.1", "null", #""asd""#, "true", #""""#, "[\"a\"]\n", "[true]", " [] ",
    ])
    func acceptsJSONTestSuiteSamples(text: String) {
        #expect(parseError(Array(text.utf8)) == nil)
    }

    /// A sample of JSONTestSuite's n_ (must reject) cases.
    @Test(arguments: [
        "[1 true]", "[a\u{E5}]", #"["": 1]"#, #"[""],"#, "[,1]", "[1,,2]", #"["x",,]"#, #"["x"]]"#, #"["",]"#, #"["x""#,
        "[x", "[3[4]]", "[\u{FF}]", "[1:2]", "[,]", "[-]", "[   , \"\"]", "[\"a\",\n4\n,1,", "[1,]", "[1,,]",
        "[\"\u{B}a\"\\f]",
        "[*]", #"[""#, "[1,", "[1,\n1\n,1", #"[{}"#, "[fals]", "[nul]", "[tru]", "123\0", "[++1234]", "[+1]", "[+Inf]",
        "[-01]",
        "[-1.0.]", "[-2.]", "[-NaN]", "[.-1]", "[.2e-3]", "[0.1.2]", "[0.3e+]", "[0.3e]", "[0.e1]", "[0E+]", "[0E]",
        "[0e+]",
        "[0e]", "[1.0e+]", "[1.0e-]", "[1.0e]", "[1 000.0]", "[1eE2]", "[2.e+3]", "[2.e-3]", "[2.e3]", "[9.e+]",
        "[Inf]", "[NaN]",
        "[\u{FF}\u{FE}]", "[1+2]", "[0x1]", "[0x42]", "[Infinity]", "[0e+-1]", "[-123.123foo]", "[123\u{E5}]",
        "[1e1\u{E5}]",
        "[0\u{E5}]", "[-Infinity]", "[-foo]", "[- 1]", "[-012]", "[-.123]", "[-1x]", "[1ea]", "[1.]", "[.123]",
        "[1.2a-3]",
        "[1.8011670033376514H-308]", "[012]", "[\"x\"", "[\u{3000}]",
        #"{"x", null}"#, #"{"x"::"b"}"#, "{🇨🇭}", #"{"a" b}"#, "{:\"b\"}", #"{"a" "b"}"#, #"{"a":"a" 123}"#,
        "{key: 'value'}",
        "{\"\u{B9}\":\"0\",}", #"{"a":"b"}/**/"#, #"{"a":"b"}/**//"#, #"{"a":"b"}//"#, #"{"a":"b"}/"#,
        #"{"a":"b",,"c":"d"}"#,
        "{a: \"b\"}", #"{"a":"a"#, #"{"a":"b"} #"#, #"{"a":/*comment*/"b"}"#, #"{"a":"b"}#{}"#, "{[: \"x\"}\n",
        #"{"a":true} "x""#,
        "{'a':0}", "{,}", #"{"a" "#, #"{"a""#, "{1:1}", "{9999E9999:1}", #"{"a":"b"#, #"{"a":"b", }"#,
        "{\"a\":\"a", "{\"a\":", "{\"a\"", "{[", "{\"", "{'a'", "{\"a\":\"b\",}", "{\"x\":1,\"x\":2}",
        #"["\uD800\"]"#, #"["\uD800\u"]"#, #"["\uD800\u1"]"#, #"["\uD800\u1x"]"#, #"[é]"#, #"["\x00"]"#, #"["\\\"]"#,
        "[\"\\\t\"]", #"["\🌀"]"#, #"["\"]"#, #"["\u00A"]"#, #"["\uD834\uDd"]"#, #"["\uD800\uD800\x"]"#, #"["\a"]"#,
        #"["\uqqqq"]"#, "[\\u0020\"asd\"]", #"[\n]"#, #""\"#, "\"\\u{0}\"", "[\"a\u{0}a\"]", "[\"new\nline\"]",
        "[\"\t\"]",
        #""\UA66D""#, #""""x"#, "", " ", "[", "]", "{", "}", "\u{FEFF}", "<.>", "[<null>]", "[1]x", "[1]]", "[\"asd]",
        "aå",
        "[True]", "1]", "{\"x\": true,", "[][]", "]", "\u{FEFF}{}", "[\u{0}]", "2@", "{}}", "{\"\":",
        "{\"a\":/*comment*/\"b\"}",
        "{\"a\": true} \"x\"", "['", "[,", "[{", "[\"a", "[\"a\"", "{]", "{\"a\"}", "{\"a\":1", "[1, 2, 3,]",
        "\"\\uDFAA\"",
        #"["\uDADA"]"#, #"["\uD888\u1234"]"#, #"["\ud800\ud800"]"#, #"["\ud800abc"]"#,
    ])
    func rejectsJSONTestSuiteSamples(text: String) {
        #expect(parseError(Array(text.utf8)) != nil)
    }
}
