/// How important a log record is; a logger drops records below its configured level.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error, critical

    /// Parses the lower-case names used in configuration (`"info"`, `"warning"`, …).
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }

    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
