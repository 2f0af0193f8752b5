/// One record rendered as a bounded JSON line: `{"ts","level","label","msg",…fields}` and a newline.
///
/// A log line never grows with its input: a string longer than `maxValueBytes` (escaped) keeps its
/// beginning and ends in a marker saying how many bytes were cut, and fields that would take the
/// line past `maxLineBytes` are left out, counted in a last field `log_fields_omitted`. One 1 MB
/// search query logged as a field costs a few KiB of log, not a megabyte per line.
///
/// ```swift
/// let line = LogLine(record, limits: LogLine.Limits(maxValueBytes: 256))
/// write(fd, line.bytes)
/// ```
public struct LogLine: Sendable {
    /// Bounds of one rendered line.
    public struct Limits: Sendable, Equatable {
        /// Most bytes of one string (message, label, key or value) between its quotes, marker included.
        public var maxValueBytes: Int
        /// Most bytes of the whole line; at least `maxValueBytes + 256`, so the message always fits.
        public var maxLineBytes: Int

        /// Limits of 4 KiB per value and 16 KiB per line by default.
        public init(maxValueBytes: Int = 4096, maxLineBytes: Int = 16 * 1024) {
            self.maxValueBytes = max(maxValueBytes, 64)
            self.maxLineBytes = max(maxLineBytes, self.maxValueBytes + 256)
        }
    }

    /// The line's UTF-8 bytes, newline included.
    public private(set) var bytes: [UInt8] = []

    /// Renders `record` within `limits`.
    public init(_ record: LogRecord, limits: Limits = Limits()) {
        bytes.reserveCapacity(256)
        append("{\"ts\":\"")
        append(JSONLineLogHandler.rfc3339(record.timestamp))
        append("\",\"level\":\"")
        append(record.level.description)
        append("\",\"label\":")
        appendQuoted(record.label, limit: limits.maxValueBytes)
        append(",\"msg\":")
        appendQuoted(record.message, limit: limits.maxValueBytes)
        // Room kept for the omission note and the closing brace, whatever the fields hold.
        let reserve = 40
        var omitted = 0
        for (key, value) in record.fields {
            if omitted > 0 {
                omitted += 1
                continue
            }
            var field = LogLine()
            field.append(",")
            field.appendQuoted(key, limit: limits.maxValueBytes)
            field.append(":")
            switch value {
            case .string(let string): field.appendQuoted(string, limit: limits.maxValueBytes)
            case .int(let int): field.append(String(int))
            case .double(let double): field.append(double.isFinite ? String(double) : "null")
            case .bool(let bool): field.append(bool ? "true" : "false")
            }
            if bytes.count + field.bytes.count + reserve > limits.maxLineBytes {
                omitted = 1
                continue
            }
            bytes.append(contentsOf: field.bytes)
        }
        if omitted > 0 {
            append(",\"log_fields_omitted\":")
            append(String(omitted))
        }
        append("}\n")
    }

    private init() {}

    /// The line as a `String`.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends `string` as a JSON string whose escaped content takes at most `limit` bytes.
    mutating func appendQuoted(_ string: String, limit: Int) {
        bytes.append(UInt8(ascii: "\""))
        let start = bytes.count
        // A string cut short keeps what fits with room for the marker (at most 37 bytes, with 20 digits).
        let budget = limit - 40
        var kept = (end: start, consumed: 0)
        var consumed = 0
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": append("\\\"")
            case "\\": append("\\\\")
            case "\n": append("\\n")
            case "\r": append("\\r")
            case "\t": append("\\t")
            case let s where s.value < 0x20 || s.value == 0x7F:
                let hex = String(s.value, radix: 16)
                append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default:
                UTF8.encode(scalar) { bytes.append($0) }
            }
            if bytes.count - start > limit {
                bytes.removeSubrange(kept.end...)
                append(" [… \(string.utf8.count - kept.consumed) bytes cut]")
                break
            }
            consumed += UTF8.width(scalar)
            if bytes.count - start <= budget { kept = (bytes.count, consumed) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
