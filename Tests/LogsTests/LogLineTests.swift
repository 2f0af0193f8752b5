import Foundation
import Logs
import Testing

@Suite struct LogLineTests {
    static func record(_ fields: LogFields, message: String = "search failed") -> LogRecord {
        LogRecord(level: .warning, label: "service", message: message, fields: fields, timestamp: 1_795_000_000)
    }

    /// The line parsed back as JSON: it must stay a valid object whatever was cut.
    static func object(_ line: LogLine) throws -> [String: Any] {
        #expect(line.bytes.last == UInt8(ascii: "\n"))
        #expect(line.bytes.dropLast().contains(UInt8(ascii: "\n")) == false)
        return try #require(JSONSerialization.jsonObject(with: Data(line.bytes)) as? [String: Any])
    }

    @Test func cutsALongValueAndSaysHowManyBytesWereCut() throws {
        let query = String(repeating: "q", count: 1_000_000)
        let line = LogLine(Self.record(["query": .string(query), "n": 7]))
        #expect(line.bytes.count <= LogLine.Limits().maxLineBytes)
        let object = try Self.object(line)
        let value = try #require(object["query"] as? String)
        #expect(value.utf8.count <= 4096)
        let kept = value.prefix(while: { $0 == "q" }).count
        #expect(value == String(repeating: "q", count: kept) + " [… \(1_000_000 - kept) bytes cut]")
        #expect(object["n"] as? Int == 7)
    }

    @Test func keepsAValueThatFitsExactly() throws {
        let limits = LogLine.Limits(maxValueBytes: 100)
        let exact = String(repeating: "x", count: 100)
        #expect(try Self.object(LogLine(Self.record(["v": .string(exact)]), limits: limits))["v"] as? String == exact)
        let over = exact + "y"
        let cut = try #require(
            try Self.object(LogLine(Self.record(["v": .string(over)]), limits: limits))["v"] as? String)
        #expect(cut.hasSuffix(" bytes cut]"))
        #expect(cut.utf8.count <= 100)
    }

    @Test func countsEscapesAndNeverSplitsACharacter() throws {
        let limits = LogLine.Limits(maxValueBytes: 100)
        // Each control byte takes six bytes escaped, each é two bytes raw.
        let text = String(repeating: "\u{1}é", count: 200)
        let line = LogLine(Self.record(["v": .string(text)], message: text), limits: limits)
        let object = try Self.object(line)
        for key in ["v", "msg"] {
            let value = try #require(object[key] as? String)
            let kept = value.prefix(while: { $0 == "\u{1}" || $0 == "é" })
            #expect(value == kept + " [… \(text.utf8.count - kept.utf8.count) bytes cut]")
        }
        // Escaped, the value is within its limit on the wire.
        let quoted = try #require(
            line.text.components(separatedBy: "\"v\":\"").last?.components(separatedBy: "\"").first)
        #expect(quoted.utf8.count <= 100)
    }

    @Test func leavesOutFieldsPastTheLineLimitAndCountsThem() throws {
        let limits = LogLine.Limits(maxValueBytes: 1000, maxLineBytes: 3000)
        var fields: LogFields = [:]
        for index in 0..<10 { fields.append("f\(index)", .string(String(repeating: "v", count: 900))) }
        fields.append("last", 1)
        let line = LogLine(Self.record(fields), limits: limits)
        #expect(line.bytes.count <= 3000)
        let object = try Self.object(line)
        let kept = (0..<10).filter { object["f\($0)"] != nil }.count
        #expect(kept >= 2)
        #expect(object["log_fields_omitted"] as? Int == 11 - kept)
        #expect(object["last"] == nil)
    }

    @Test func theHandlerWritesBoundedLines() throws {
        var pipe: [Int32] = [0, 0]
        #expect(Foundation.pipe(&pipe) == 0)
        defer { close(pipe[0]) }
        let handler = JSONLineLogHandler(fd: pipe[1], limits: LogLine.Limits(maxValueBytes: 200, maxLineBytes: 1000))
        Logger(label: "t", handler: handler).warning(
            "an effect failed", ["error": .string(String(repeating: "e", count: 50_000))])
        close(pipe[1])
        let written = FileHandle(fileDescriptor: pipe[0]).readDataToEndOfFile()
        #expect(written.count <= 1000)
        let object = try #require(JSONSerialization.jsonObject(with: written) as? [String: Any])
        #expect((object["error"] as? String)?.hasSuffix(" bytes cut]") == true)
    }
}
