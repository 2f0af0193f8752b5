#if canImport(Glibc)
    import Glibc
#endif

/// The `Date: …\r\n` header line (RFC 9110 IMF-fixdate), formatted at most once per second.
struct HTTPDate {
    private var second = -1
    private(set) var line: [UInt8] = []

    /// The header line for the current wall-clock second.
    mutating func current() -> [UInt8] {
        let now = Int(time(nil))
        if now != second {
            second = now
            line = Self.format(now)
        }
        return line
    }

    /// `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n` for `seconds` since 1970.
    static func format(_ seconds: Int) -> [UInt8] {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text =
            "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
        return Array(text.utf8)
    }
}
