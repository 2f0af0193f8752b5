/// A snapshot record's payload: the session at one version.
extension StoredSnapshot {
    /// Layout: lastSeq u64, stub u8, id and reactor (short strings), state (blob), running (u32 count, u64
    /// each), the legacy action log, the pulse counts (u32 count, each a short-string name and a u64), then
    /// the incarnation (u64), then `recoveredThrough` (u64), then the params (blob), then the storage version
    /// (u32), then the pending timers (``StoredTimers``, only once the session had one). Newer sections come
    /// last: a payload that ends before the pulse section has no counts (all 0), one that ends before the
    /// incarnation has none (0, unknown), one that ends before `recoveredThrough` recovered nothing yet (0), one
    /// that ends before the params has none (a reactor without parameters, or written before they existed), one
    /// that ends before the storage version was written by version 1, one that ends before the timers has none.
    func encode(into buffer: inout [UInt8]) {
        buffer.appendLittleEndian(lastSeq)
        buffer.append(stub ? 1 : 0)
        buffer.appendShortString(id)
        buffer.appendShortString(reactor)
        buffer.appendBlob(state)
        buffer.appendLittleEndian(UInt32(running.count))
        for seq in running { buffer.appendLittleEndian(seq) }
        StoredActionLog.encode(actions, into: &buffer)
        // Names longer than a short string cannot be stored whole; such a pulse starts again at 0.
        let storable = pulses.filter { $0.key.utf8.count <= Int(UInt8.max) }.sorted { $0.key < $1.key }
        buffer.appendLittleEndian(UInt32(storable.count))
        for (name, count) in storable {
            buffer.appendShortString(name)
            buffer.appendLittleEndian(count)
        }
        buffer.appendLittleEndian(incarnation)
        buffer.appendLittleEndian(recoveredThrough)
        buffer.appendBlob(params)
        buffer.appendLittleEndian(UInt32(truncatingIfNeeded: storageVersion))
        // Only a session that ever had a timer carries the section.
        if !timers.isEmpty || timerSerial != 0 { StoredTimers.encode(timers, serial: timerSerial, into: &buffer) }
    }

    init(version: UInt64, payload: [UInt8]) throws(PayloadReader.PayloadError) {
        var reader = PayloadReader(payload)
        self.version = version
        lastSeq = try reader.integer(UInt64.self)
        stub = try reader.integer(UInt8.self) != 0
        id = try reader.shortString()
        reactor = try reader.shortString()
        state = try reader.blob()
        let runningCount = Int(try reader.integer(UInt32.self))
        running = []
        for _ in 0..<runningCount { running.append(try reader.integer(UInt64.self)) }
        actions = try StoredActionLog.decode(&reader)
        pulses = [:]
        recoveredThrough = 0
        guard reader.offset < reader.bytes.count else { return }
        let pulseCount = Int(try reader.integer(UInt32.self))
        for _ in 0..<pulseCount {
            let name = try reader.shortString()
            pulses[name] = try reader.integer(UInt64.self)
        }
        guard reader.offset < reader.bytes.count else { return }
        incarnation = try reader.integer(UInt64.self)
        guard reader.offset < reader.bytes.count else { return }
        recoveredThrough = try reader.integer(UInt64.self)
        guard reader.offset < reader.bytes.count else { return }
        params = try reader.blob()
        guard reader.offset < reader.bytes.count else { return }
        storageVersion = Int(try reader.integer(UInt32.self))
        guard reader.offset < reader.bytes.count else { return }
        (timers, timerSerial) = try StoredTimers.decode(&reader)
    }

    /// Only the incarnation, found by stepping over the sections before it (the start-up scan); 0 when the
    /// payload has none or is too short to hold one where it should be.
    static func incarnation(payload: UnsafeRawBufferPointer) -> UInt64 {
        guard let offset = offsetAfterPulses(payload: payload), offset + 8 <= payload.count else { return 0 }
        return payload.loadLittleEndian(UInt64.self, at: offset)
    }

    /// The earliest `at` of the snapshot's timers (the start-up scan), nil when it has none.
    static func earliestTimer(payload: UnsafeRawBufferPointer) -> Int64? {
        // The incarnation and recoveredThrough, the params (a blob) and the storage version, then the timers'
        // count and earliest time.
        guard let afterPulses = offsetAfterPulses(payload: payload), afterPulses + 20 <= payload.count else {
            return nil
        }
        let offset = afterPulses + 16 + 4 + Int(payload.loadLittleEndian(UInt32.self, at: afterPulses + 16)) + 4
        guard offset + 12 <= payload.count, payload.loadLittleEndian(UInt32.self, at: offset) > 0 else { return nil }
        return payload.loadLittleEndian(Int64.self, at: offset + 4)
    }

    /// Where the section after the pulse counts begins, found by stepping over the ones before it.
    static func offsetAfterPulses(payload: UnsafeRawBufferPointer) -> Int? {
        var offset = 9  // lastSeq and stub
        func take(_ count: Int) -> Bool {
            offset += count
            return offset <= payload.count
        }
        func length<T: FixedWidthInteger>(_ type: T.Type) -> Int? {
            guard offset + MemoryLayout<T>.size <= payload.count else { return nil }
            let value = payload.loadLittleEndian(T.self, at: offset)
            offset += MemoryLayout<T>.size
            return Int(value)
        }
        // id and reactor, state, running seqs.
        guard let id = length(UInt8.self), take(id), let reactor = length(UInt8.self), take(reactor),
            let state = length(UInt32.self), take(state), let running = length(UInt32.self), take(running * 8),
            let actions = length(UInt32.self)
        else { return nil }
        for _ in 0..<actions {
            // seq, time and flags, the action, then the timer's name when flag 8 says there is one.
            guard take(17) else { return nil }
            let namesTimer = payload[offset - 1] & 8 != 0
            guard let action = length(UInt32.self), take(action) else { return nil }
            if namesTimer {
                guard let name = length(UInt8.self), take(name) else { return nil }
            }
        }
        guard let pulses = length(UInt32.self) else { return nil }
        for _ in 0..<pulses {
            guard let name = length(UInt8.self), take(name + 8) else { return nil }
        }
        return offset
    }

    /// Only the id and reactor, read from the front of a snapshot payload (the start-up scan).
    static func identity(payload: UnsafeRawBufferPointer) -> (id: String, reactor: String)? {
        guard payload.count >= 10 else { return nil }
        let idLength = Int(payload[9])
        guard payload.count >= 10 + idLength + 1 else { return nil }
        let nameLength = Int(payload[10 + idLength])
        guard payload.count >= 11 + idLength + nameLength else { return nil }
        let id = String(decoding: UnsafeRawBufferPointer(rebasing: payload[10..<(10 + idLength)]), as: UTF8.self)
        let reactor = String(
            decoding: UnsafeRawBufferPointer(rebasing: payload[(11 + idLength)..<(11 + idLength + nameLength)]),
            as: UTF8.self)
        return (id, reactor)
    }
}

/// The payload of an accept record.
struct StoredAccept: Sendable, Equatable {
    /// Bytes before the action: time and flags.
    static let headerBytes = 9

    /// The bytes of action JSON in the accept record at `location`.
    static func actionBytes(_ location: RecordLocation) -> Int {
        Int(location.length) - JournalRecord.frameBytes - JournalRecord.headerBytes - headerBytes
    }

    var at: Int64
    var stubbed: Bool
    /// The action's mutations were all reduced before the record was written (no completion record follows).
    var completed: Bool
    /// Who sent it (flag 4: one of the session's own effects).
    var origin: ActionOrigin = .request
    var body: [UInt8]
    /// The timer whose action this is: its accept record is also the timer's removal (flag 8, then the
    /// name as a short string before the body).
    var timer: String?

    func encode(into buffer: inout [UInt8]) {
        Self.encode(
            at: at, stubbed: stubbed, completed: completed, origin: origin, body: body, timer: timer, into: &buffer)
    }

    /// The payload of an accept record of these fields, without making the record: a record built only to be
    /// captured by the journal's payload closure was copied twice and destroyed (~200 instructions per action).
    static func encode(
        at: Int64, stubbed: Bool, completed: Bool, origin: ActionOrigin, body: [UInt8], timer: String?,
        into buffer: inout [UInt8]
    ) {
        buffer.appendLittleEndian(at)
        buffer.append((stubbed ? 1 : 0) | (completed ? 2 : 0) | (origin == .effect ? 4 : 0) | (timer != nil ? 8 : 0))
        if let timer { buffer.appendShortString(timer) }
        buffer.append(contentsOf: body)
    }

    init(
        at: Int64, stubbed: Bool, completed: Bool, origin: ActionOrigin = .request, body: [UInt8], timer: String? = nil
    ) {
        self.at = at
        self.stubbed = stubbed
        self.completed = completed
        self.origin = origin
        self.body = body
        self.timer = timer
    }

    init(payload: [UInt8]) throws(PayloadReader.PayloadError) {
        var reader = PayloadReader(payload)
        at = try reader.integer(Int64.self)
        let flags = try reader.integer(UInt8.self)
        stubbed = flags & 1 != 0
        completed = flags & 2 != 0
        origin = flags & 4 != 0 ? .effect : .request
        timer = flags & 8 != 0 ? try reader.shortString() : nil
        body = reader.rest()
    }

    /// The log entry it stands for.
    func entry(seq: UInt64) -> ActionLogEntry {
        ActionLogEntry(seq: seq, at: at, action: body, stubbed: stubbed, origin: origin, timer: timer)
    }
}

/// The payload of an action-log record (and the tail of legacy snapshots): entries, oldest first.
enum StoredActionLog {
    /// Bytes of an action-log payload before its entries.
    static let chunkHeaderBytes = 4
    /// About how many bytes of entries one checkpoint chunk holds (an entry larger than this goes alone).
    static let chunkTargetBytes = 1 << 20
    /// Bytes of one entry besides its action: seq, time, flags, length.
    static let entryHeaderBytes = 21

    static func encode(_ entries: [ActionLogEntry], into buffer: inout [UInt8]) {
        buffer.appendLittleEndian(UInt32(entries.count))
        for entry in entries {
            buffer.appendLittleEndian(entry.seq)
            buffer.appendLittleEndian(entry.at)
            buffer.append(
                (entry.stubbed ? 1 : 0) | (entry.interrupted ? 2 : 0) | (entry.origin == .effect ? 4 : 0)
                    | (entry.timer != nil ? 8 : 0))
            buffer.appendBlob(entry.action)
            if let timer = entry.timer { buffer.appendShortString(timer) }
        }
    }

    static func decode(_ reader: inout PayloadReader) throws(PayloadReader.PayloadError) -> [ActionLogEntry] {
        let count = Int(try reader.integer(UInt32.self))
        var entries: [ActionLogEntry] = []
        // No more than the bytes left can hold: the count is read from disk, and a damaged one must
        // not cost megabytes before the entries run out (the journal fuzzer spent most of its time here).
        entries.reserveCapacity(min(count, (reader.bytes.count - reader.offset) / entryHeaderBytes))
        for _ in 0..<count {
            let seq = try reader.integer(UInt64.self)
            let at = try reader.integer(Int64.self)
            let flags = try reader.integer(UInt8.self)
            let action = try reader.blob()
            let timer = flags & 8 != 0 ? try reader.shortString() : nil
            entries.append(
                ActionLogEntry(
                    seq: seq, at: at, action: action, stubbed: flags & 1 != 0, interrupted: flags & 2 != 0,
                    origin: flags & 4 != 0 ? .effect : .request, timer: timer))
        }
        return entries
    }

    static func decode(payload: [UInt8]) throws(PayloadReader.PayloadError) -> [ActionLogEntry] {
        var reader = PayloadReader(payload)
        return try decode(&reader)
    }
}
