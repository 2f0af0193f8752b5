/// A timer a session's reactor scheduled: its action (JSON, the action log's shape) is sent to the session at `at`.
public struct PendingTimer: Sendable, Equatable {
    public var name: String
    /// When it falls due, nanoseconds since the Unix epoch (the service clock's wall time).
    public var at: Int64
    /// The action to send, as JSON in the `{"type": …}` shape.
    public var action: [UInt8]

    public init(name: String, at: Int64, action: [UInt8]) {
        self.name = name
        self.at = at
        self.action = action
    }
}

/// One journaled change of a session's timers (a timer record). A timer that fires leaves no record of its
/// own: the accept record of its action names it (``StoredAccept/timer``), so firing and removal are one record.
enum TimerChange: Sendable, Equatable {
    case schedule(PendingTimer)
    case cancel(name: String)

    /// The timer's name.
    var name: String {
        switch self {
        case .schedule(let timer): timer.name
        case .cancel(let name): name
        }
    }

    /// Payload: op u8 (1 schedule, 2 cancel), name (short string), then for a schedule `at` (i64) and the action.
    func encode(into buffer: inout [UInt8]) {
        switch self {
        case .schedule(let timer):
            buffer.append(1)
            buffer.appendShortString(timer.name)
            buffer.appendLittleEndian(timer.at)
            buffer.append(contentsOf: timer.action)
        case .cancel(let name):
            buffer.append(2)
            buffer.appendShortString(name)
        }
    }

    init(payload: [UInt8]) throws(PayloadReader.PayloadError) {
        var reader = PayloadReader(payload)
        let op = try reader.integer(UInt8.self)
        let name = try reader.shortString()
        switch op {
        case 1:
            let at = try reader.integer(Int64.self)
            self = .schedule(PendingTimer(name: name, at: at, action: reader.rest()))
        case 2:
            self = .cancel(name: name)
        default:
            throw PayloadReader.PayloadError(description: "a timer record has the unknown operation \(op)")
        }
    }

    /// The due time of a schedule record's payload, read without copying it (the start-up scan); nil for a cancel.
    static func scheduledAt(payload: UnsafeRawBufferPointer) -> Int64? {
        guard payload.count >= 2, payload[0] == 1 else { return nil }
        let offset = 2 + Int(payload[1])
        guard payload.count >= offset + 8 else { return nil }
        return payload.loadLittleEndian(Int64.self, at: offset)
    }
}

/// The timers part of a snapshot (its last section): how many, the earliest `at` (so the start-up scan
/// reads one field), the serial of the session's latest timer record, then each timer.
enum StoredTimers {
    static func encode(_ timers: [PendingTimer], serial: UInt64, into buffer: inout [UInt8]) {
        buffer.appendLittleEndian(UInt32(timers.count))
        buffer.appendLittleEndian(timers.map(\.at).min() ?? 0)
        buffer.appendLittleEndian(serial)
        for timer in timers {
            buffer.appendShortString(timer.name)
            buffer.appendLittleEndian(timer.at)
            buffer.appendBlob(timer.action)
        }
    }

    static func decode(
        _ reader: inout PayloadReader
    ) throws(PayloadReader.PayloadError) -> (timers: [PendingTimer], serial: UInt64) {
        let count = Int(try reader.integer(UInt32.self))
        _ = try reader.integer(Int64.self)
        let serial = try reader.integer(UInt64.self)
        var timers: [PendingTimer] = []
        timers.reserveCapacity(min(count, (reader.bytes.count - reader.offset) / 13))
        for _ in 0..<count {
            let name = try reader.shortString()
            let at = try reader.integer(Int64.self)
            timers.append(PendingTimer(name: name, at: at, action: try reader.blob()))
        }
        return (timers, serial)
    }
}
