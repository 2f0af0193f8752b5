/// One log record as a handler receives it.
public struct LogRecord: Sendable {
    public var level: LogLevel
    public var label: String
    public var message: String
    public var fields: LogFields
    /// Seconds since 1970 (wall clock), captured when the record was made.
    public var timestamp: Double

    public init(level: LogLevel, label: String, message: String, fields: LogFields, timestamp: Double) {
        self.level = level
        self.label = label
        self.message = message
        self.fields = fields
        self.timestamp = timestamp
    }

    /// The value of the first field named `key`, if any.
    public subscript(key: String) -> LogValue? {
        fields.first(where: { $0.key == key })?.value
    }
}

/// Where log records go. Implementations must be safe to call from any thread.
public protocol LogHandler: Sendable {
    func log(_ record: LogRecord)
}

/// Discards everything; the default for libraries that were given no logger.
public struct NullLogHandler: LogHandler {
    public init() {}
    public func log(_ record: LogRecord) {}
}
