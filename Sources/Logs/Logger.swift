#if canImport(Glibc)
    import Glibc
#endif

/// A value-type logger: a label, a minimum level, fields carried by every record, and a handler.
///
/// ```swift
/// var logger = Logger(label: "http", level: .info, handler: JSONLineLogHandler.standardError)
/// logger[field: "loop"] = 2
/// logger.warning("accept failed; backing off", ["errno": 24, "delay_ms": 100])
/// ```
/// Messages and fields are autoclosures: a record below `level` costs one comparison.
public struct Logger: Sendable {
    public var label: String
    public var level: LogLevel
    public var handler: any LogHandler
    /// Fields added to every record this logger makes (before the call's own fields).
    public var fields: LogFields = [:]

    public init(label: String, level: LogLevel = .info, handler: any LogHandler = NullLogHandler()) {
        self.label = label
        self.level = level
        self.handler = handler
    }

    /// A logger that drops everything.
    public static var disabled: Logger { Logger(label: "", level: .critical, handler: NullLogHandler()) }

    /// Sets or replaces a field carried by every record.
    public subscript(field key: String) -> LogValue? {
        get { fields.first(where: { $0.key == key })?.value }
        set {
            fields.removeAll(key: key)
            if let newValue { fields.append(key, newValue) }
        }
    }

    /// A copy with a different label, for a sub-component.
    public func labeled(_ label: String) -> Logger {
        var copy = self
        copy.label = label
        return copy
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]
    ) {
        guard level >= self.level else { return }
        var all = self.fields
        all.append(contentsOf: fields())
        handler.log(LogRecord(level: level, label: label, message: message(), fields: all, timestamp: Self.now()))
    }

    public func trace(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.trace, message(), fields())
    }
    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.debug, message(), fields())
    }
    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.info, message(), fields())
    }
    public func notice(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.notice, message(), fields())
    }
    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.warning, message(), fields())
    }
    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.error, message(), fields())
    }
    public func critical(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        log(.critical, message(), fields())
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
