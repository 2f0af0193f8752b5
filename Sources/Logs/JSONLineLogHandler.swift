#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Writes one JSON object per line, `{"ts","level","label","msg",…fields}`, with one `write(2)`
/// per record so lines from different threads never interleave.
public final class JSONLineLogHandler: LogHandler {
    private let fd: Int32
    private let lock = Mutex<Void>(())

    /// Writes to file descriptor `fd` (not closed by the handler).
    public init(fd: Int32) {
        self.fd = fd
    }

    /// The handler for standard error, which a server's operators collect.
    public static let standardError = JSONLineLogHandler(fd: 2)

    public func log(_ record: LogRecord) {
        var line = Self.render(record)
        lock.withLock { _ in
            line.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return  // nowhere left to report a failing log stream
                    }
                    offset += n
                }
            }
        }
    }

    /// The line for `record`, newline included.
    public static func render(_ record: LogRecord) -> String {
        var out = "{\"ts\":\""
        out += rfc3339(record.timestamp)
        out += "\",\"level\":\"\(record.level)\",\"label\":"
        appendQuoted(record.label, to: &out)
        out += ",\"msg\":"
        appendQuoted(record.message, to: &out)
        for (key, value) in record.fields {
            out += ","
            appendQuoted(key, to: &out)
            out += ":"
            switch value {
            case .string(let string): appendQuoted(string, to: &out)
            case .int(let int): out += String(int)
            case .double(let double): out += double.isFinite ? String(double) : "null"
            case .bool(let bool): out += bool ? "true" : "false"
            }
        }
        out += "}\n"
        return out
    }

    /// `2026-11-22T04:27:01.123Z` for a wall-clock time in seconds since 1970.
    public static func rfc3339(_ seconds: Double) -> String {
        var whole = time_t(seconds.rounded(.down))
        let millis = Int((seconds - Double(whole)) * 1000)
        var parts = tm()
        gmtime_r(&whole, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    static func appendQuoted(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let s where s.value < 0x20 || s.value == 0x7F:
                let hex = String(s.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
