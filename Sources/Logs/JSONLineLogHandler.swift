import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one bounded JSON object per line (``LogLine``), with one `write(2)` per record so lines
/// from different threads never interleave.
public final class JSONLineLogHandler: LogHandler {
    private let fd: Int32
    private let limits: LogLine.Limits
    private let lock = Mutex<Void>(())

    /// Writes to file descriptor `fd` (not closed by the handler), each line within `limits`.
    public init(fd: Int32, limits: LogLine.Limits = LogLine.Limits()) {
        self.fd = fd
        self.limits = limits
    }

    /// The handler for standard error, which a server's operators collect.
    public static let standardError = JSONLineLogHandler(fd: 2)

    public func log(_ record: LogRecord) {
        let line = LogLine(record, limits: limits).bytes
        lock.withLock { _ in
            // Nowhere left to report a failing log stream.
            line.withUnsafeBytes { bytes in _ = Result { () throws(IOError) in try Posix.writeAll(fd, bytes) } }
        }
    }

    /// The line for `record`, newline included, bounded by `limits` (see ``LogLine``).
    public static func render(_ record: LogRecord, limits: LogLine.Limits = LogLine.Limits()) -> String {
        LogLine(record, limits: limits).text
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
}
