import Logs
import Testing

@Suite struct LoggerTests {
    @Test func dropsRecordsBelowItsLevel() {
        let recorder = RecordingLogHandler()
        let logger = Logger(label: "t", level: .warning, handler: recorder)
        logger.info("hidden")
        logger.error("shown", ["code": 7])
        #expect(recorder.records.map(\.message) == ["shown"])
        #expect(recorder.records.first?["code"] == .int(7))
    }

    @Test func carriesLoggerFieldsBeforeCallFields() {
        let recorder = RecordingLogHandler()
        var logger = Logger(label: "t", level: .trace, handler: recorder)
        logger[field: "loop"] = 2
        logger.debug("x", ["fd": 9])
        #expect(recorder.records.first?.fields.map(\.key) == ["loop", "fd"])
    }

    @Test func rendersOneEscapedJSONObjectPerLine() {
        let record = LogRecord(
            level: .error, label: "http", message: "bad \"quote\"\nnext\u{1}",
            fields: ["path": "/a\\b", "n": 3, "ok": false, "nan": .double(.nan)],
            timestamp: 1_795_000_000.25)
        let line = JSONLineLogHandler.render(record)
        #expect(
            line
                == #"{"ts":"2026-11-18T11:06:40.250Z","level":"error","label":"http","#
                + #""msg":"bad \"quote\"\nnext\u0001","path":"/a\\b","n":3,"ok":false,"nan":null}"#
                + "\n")
        #expect(line.filter { $0 == "\n" }.count == 1)
    }

    @Test func parsesLevelNames() {
        #expect(LogLevel(name: "warning") == .warning)
        #expect(LogLevel(name: "loud") == nil)
    }
}
