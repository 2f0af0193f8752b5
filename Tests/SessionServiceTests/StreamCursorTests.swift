import Testing

@testable import SessionService

/// The `id:` of a multiplexed stream: written and read back exactly, and refused when it belongs to
/// another list of sessions or is not a cursor at all.
@Suite struct StreamCursorTests {
    @Test(
        arguments: [
            [nil, nil], [0, nil], [9, 10], [12345, 0], [UInt64.max, 1_000_000_000_000_000_000], [nil, 99, nil],
        ] as [[UInt64?]])
    func aCursorReadsBackAsWritten(positions: [UInt64?]) throws {
        let sessions = positions.indices.map { "s\($0)" }
        var cursor = StreamCursor(sessions: sessions)
        cursor.positions = positions
        let text = cursor.text
        #expect(text.hasPrefix(String(decoding: StreamCursor.name(of: sessions), as: UTF8.self) + ":"))
        #expect(
            text.split(separator: ":")[1...].joined().split(separator: ".", omittingEmptySubsequences: false).map {
                UInt64($0)
            } == positions)
        #expect(StreamCursor(text, sessions: sessions) == cursor)
    }

    @Test func aCursorOfAnotherListOrNoCursorIsRefused() {
        var cursor = StreamCursor(sessions: ["a", "b"])
        cursor.positions = [3, 4]
        #expect(cursor.text.hasSuffix(":3.4"))
        #expect(
            StreamCursor(cursor.text, sessions: ["b", "a"]) == nil, "the order of the sessions is part of the list")
        #expect(StreamCursor(cursor.text, sessions: ["a", "b", "c"]) == nil)
        let name = String(decoding: StreamCursor.name(of: ["a", "b"]), as: UTF8.self)
        for text in [
            "", "3.4", name, "\(name):3", "\(name):3.4.5", "\(name):+3.4", "\(name):3.x",
            "\(name):3.184467440737095516150",
        ] {
            #expect(StreamCursor(text, sessions: ["a", "b"]) == nil, "\(text)")
        }
        #expect(StreamCursor("\(name):.", sessions: ["a", "b"])?.positions == [nil, nil])
    }

    @Test func aCursorCarriesEachSessionsIncarnationAndResumesOnlyThatOne() throws {
        var cursor = StreamCursor(sessions: ["a", "b", "c"], incarnations: [0x1_9c1f_2a07, 0, 0x1b])
        cursor.positions = [12, 3, nil]
        #expect(cursor.text.hasSuffix(":12~9c1f2a07.3.~1b"), "the low 32 bits in hex; nothing when unknown")
        let read = try #require(StreamCursor(cursor.text, sessions: ["a", "b", "c"]))
        #expect(read == cursor)
        // Resumed on the same sessions: every position holds. On a new a (another incarnation): a starts afresh.
        #expect(
            read.positions(resumingOn: StreamCursor(sessions: ["a", "b", "c"], incarnations: [0x9c1f_2a07, 5, 0x1b]))
                == [12, 3, nil])
        #expect(
            read.positions(resumingOn: StreamCursor(sessions: ["a", "b", "c"], incarnations: [0x77, 5, 0x1b])) == [
                nil, 3, nil,
            ])
        // A cursor without marks (written before incarnations) resumes by version alone.
        let name = String(decoding: StreamCursor.name(of: ["a", "b", "c"]), as: UTF8.self)
        let unmarked = try #require(StreamCursor("\(name):12.3.", sessions: ["a", "b", "c"]))
        #expect(
            unmarked.positions(resumingOn: StreamCursor(sessions: ["a", "b", "c"], incarnations: [0x77, 5, 0x1b])) == [
                12, 3, nil,
            ])
        for text in [
            "\(name):12~.3.", "\(name):12~0.3.", "\(name):12~123456789.3.", "\(name):12~XY.3.", "\(name):12~1~2.3.",
        ] {
            #expect(StreamCursor(text, sessions: ["a", "b", "c"]) == nil, "\(text)")
        }
    }
}
