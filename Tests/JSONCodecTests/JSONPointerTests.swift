import JSONCodec
import Testing

@Suite struct JSONPointerTests {
    /// RFC 6901 §5's example document.
    let document: JSONValue = [
        "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8,
    ]

    @Test(arguments: [
        ("", nil as JSONValue?),
        ("/foo", ["bar", "baz"] as JSONValue),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ("/k\"l", 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ])
    func resolvesTheRFCExamples(text: String, expected: JSONValue?) throws {
        let pointer = try JSONPointer(text)
        #expect(document[pointer] == (expected ?? document))
        #expect(pointer.description == text)
    }

    @Test(arguments: ["/foo/2", "/foo/-", "/foo/01", "/foo/+1", "/foo/bar", "/nope", "/foo/0/x", "/ /x"])
    func absentTargetsAreNil(text: String) throws {
        #expect(document[try JSONPointer(text)] == nil)
    }

    @Test(arguments: [("a", 0), ("/a~", 2), ("/a~2", 2), ("/~x/b", 1)])
    func invalidPointerText(text: String, offset: Int) {
        #expect(throws: JSONPointerError.self) { try JSONPointer(text) }
        do {
            _ = try JSONPointer(text)
        } catch {
            #expect(error.offset == offset)
            #expect(error.message.contains(text))
        }
    }

    @Test func tokensRoundTrip() throws {
        let pointer = JSONPointer(tokens: ["a/b", "~", "0"])
        #expect(pointer.description == "/a~1b/~0/0")
        #expect(try JSONPointer(pointer.description) == pointer)
    }

    /// Found by the fuzzer: "~" followed by a combining mark is one Character but still needs escaping.
    @Test func escapesTildeBeforeACombiningMark() throws {
        let pointer = JSONPointer(tokens: ["~\u{36A}", "/\u{301}"])
        #expect(pointer.description == "/~0\u{36A}/~1\u{301}")
        #expect(try JSONPointer(pointer.description) == pointer)
        let fuzzed = String(decoding: [0x2F, 0x69, 0x7E, 0x30, 0xCD, 0xAA, 0x7E, 0x31] as [UInt8], as: UTF8.self)
        let parsed = try JSONPointer(fuzzed)
        #expect(try JSONPointer(parsed.description) == parsed)
    }
}
