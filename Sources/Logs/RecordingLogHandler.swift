import Synchronization

/// Keeps every record in memory, for tests that assert what was logged.
public final class RecordingLogHandler: LogHandler {
    private let storage = Mutex<[LogRecord]>([])

    public init() {}

    public func log(_ record: LogRecord) {
        storage.withLock { $0.append(record) }
    }

    /// Everything logged so far, oldest first.
    public var records: [LogRecord] { storage.withLock { $0 } }

    /// Records whose message contains `text`.
    public func records(containing text: String) -> [LogRecord] {
        records.filter { $0.message.contains(text) }
    }
}
