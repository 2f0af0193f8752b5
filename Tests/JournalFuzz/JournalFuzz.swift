// libFuzzer harness for the journal's on-disk format, built by .ci/fuzz-journal with
// swiftc -sanitize=fuzzer,address over the pure storage sources (the record frame, the payloads, the
// action-log checkpoint and the index the start-up scan builds). Every input is used three ways:
// - as segment bytes, read record after record as the start-up scan reads them;
// - as the payload of each kind of record (snapshot, accept, action log), decoded as recovery decodes it;
// - as a list of records to write (correctly framed, so the checksum does not stop the fuzzer), which are
//   then scanned back and applied to a `JournalIndex`, whose bookkeeping is checked after every record.
// Besides crashes, `expect` calls are oracles: a broken one prints what broke and aborts, and the input
// becomes a case in a test table in Tests/SessionServiceTests before it is fixed.

import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJournal(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkSegment(input)
    checkSnapshot(input)
    checkAccept(input)
    checkActionLog(input)
    checkWrittenRecords(input)
    return 0
}

// MARK: segment bytes as they lie on disk

/// Reads `bytes` as a segment: every record found is exactly what writing it produces, every other
/// answer is consistent with the frame it saw, and the checksum's two implementations agree.
func checkSegment(_ bytes: [UInt8]) {
    expect(
        bytes.withUnsafeBytes { CRC32C.checksum($0) == CRC32C.tableChecksum($0) },
        "the CRC-32C instruction and tables disagree")
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
            let full = JournalRecord.parse(rest)
            let header = JournalRecord.parse(rest, withPayload: false)
            switch (full, header) {
            case (.record(let record, let size), .record(let bare, let bareSize)):
                expect(
                    size == bareSize && bare.kind == record.kind && bare.key == record.key
                        && bare.number == record.number && bare.payload.isEmpty,
                    "parsing with and without the payload disagree at offset \(offset)")
                expect(
                    size >= JournalRecord.frameBytes + JournalRecord.headerBytes && size <= rest.count,
                    "record size \(size) of \(rest.count) bytes")
                expect(
                    record.encoded == Array(rest[..<size]), "the record at \(offset) does not encode to its own bytes")
                offset += size
            case (.truncated, .truncated):
                let announced = rest.count >= 4 ? Int(rest.loadLittleEndian(UInt32.self, at: 0)) : 0
                expect(
                    rest.count < 4 || rest.count < JournalRecord.frameBytes + announced,
                    "truncated, yet the announced \(announced) bytes are there")
                return
            case (.corrupt(let damage, let size), .corrupt(let bareDamage, let bareSize)):
                expect(
                    damage == bareDamage && size == bareSize, "parsing with and without the payload disagree on damage")
                if let size { expect(size <= rest.count, "a damaged frame of \(size) bytes in \(rest.count)") }
                // The scan looks for the next good record byte by byte; one step is enough here.
                offset += 1
            default:
                fail("parsing with and without the payload disagree: \(full) vs \(header)")
            }
        }
    }
}

// MARK: payloads

/// Strings a short string holds unchanged when written again (what an id or a reactor name can be).
func storable(_ string: String) -> Bool { string.utf8.count <= Int(UInt8.max) }

/// A snapshot payload: the start-up scan's identity agrees with full decoding, and what decodes is
/// written back to a payload that decodes to the same snapshot.
func checkSnapshot(_ payload: [UInt8]) {
    let identity = payload.withUnsafeBytes { StoredSnapshot.identity(payload: $0) }
    guard let snapshot = try? StoredSnapshot(version: 7, payload: payload) else { return }
    expect(
        identity?.id == snapshot.id && identity?.reactor == snapshot.reactor,
        "the scan reads identity \(String(describing: identity)), decoding \(snapshot.id) \(snapshot.reactor)")
    let incarnation = payload.withUnsafeBytes { StoredSnapshot.incarnation(payload: $0) }
    expect(
        incarnation == snapshot.incarnation,
        "the scan reads incarnation \(incarnation), decoding \(snapshot.incarnation)")
    guard storable(snapshot.id), storable(snapshot.reactor), snapshot.pulses.keys.allSatisfy(storable) else { return }
    var written: [UInt8] = []
    snapshot.encode(into: &written)
    let reread: StoredSnapshot
    do {
        reread = try StoredSnapshot(version: 7, payload: written)
    } catch {
        fail("a written snapshot does not decode: \(error)")
    }
    expect(reread == snapshot, "a snapshot changed when written and read again: \(snapshot) vs \(reread)")
}

/// An accept payload: what decodes is written back to a payload that decodes to the same accept.
func checkAccept(_ payload: [UInt8]) {
    guard let accept = try? StoredAccept(payload: payload) else {
        // Refused only when shorter than the header, or when its timer flag (8) announces a name that is cut off.
        let namesATimer = payload.count >= StoredAccept.headerBytes && payload[8] & 8 != 0
        expect(
            payload.count < StoredAccept.headerBytes || namesATimer,
            "an accept payload of \(payload.count) bytes was refused")
        return
    }
    var written: [UInt8] = []
    accept.encode(into: &written)
    expect((try? StoredAccept(payload: written)) == accept, "an accept changed when written and read again")
    expect(written.count == payload.count, "an accept of \(payload.count) bytes was written in \(written.count)")
}

/// An action-log payload: what decodes is written back to a payload that decodes to the same entries, and
/// cutting the entries into checkpoint chunks and reading each chunk back gives them all, in order.
func checkActionLog(_ payload: [UInt8]) {
    guard let entries = try? StoredActionLog.decode(payload: payload) else { return }
    var written: [UInt8] = []
    StoredActionLog.encode(entries, into: &written)
    expect(
        (try? StoredActionLog.decode(payload: written)) == entries, "an action log changed when written and read again")

    var checkpoint = ActionLogCheckpoint()
    var chunks: [(RecordKind, [ActionLogEntry])] = []
    for entry in entries { checkpoint.add(entry) { chunks.append(($0, $1)) } }
    let last = checkpoint.finish { chunks.append(($0, $1)) }
    expect(
        last == entries.last?.seq,
        "the checkpoint ends at \(String(describing: last)), the log at \(String(describing: entries.last?.seq))")
    var reread: [ActionLogEntry] = []
    for (index, (kind, chunk)) in chunks.enumerated() {
        expect(kind == (index == 0 ? .actionLogFirst : .actionLogNext), "chunk \(index) is a \(kind) record")
        let bytes = chunk.reduce(0) { $0 + StoredActionLog.entryHeaderBytes + $1.action.count }
        expect(
            !chunk.isEmpty && (chunk.count == 1 || bytes <= StoredActionLog.chunkTargetBytes),
            "a chunk of \(chunk.count) entries, \(bytes) bytes")
        var chunkPayload: [UInt8] = []
        StoredActionLog.encode(chunk, into: &chunkPayload)
        guard let decoded = try? StoredActionLog.decode(payload: chunkPayload) else {
            fail("a checkpoint chunk does not decode")
        }
        reread += decoded
    }
    expect(reread == entries, "the checkpoint's chunks do not give back the log")
}

// MARK: written records, scanned and indexed

/// A record the input asks to write, or the start of a new segment.
enum Instruction {
    case record(JournalRecord)
    case newSegment
}

/// Reads instructions from the input: per record a kind byte (kinds 1–11; 0 and 12+ start a new segment),
/// a key byte (keys 0–7), a number byte and a payload length byte, then the payload. A snapshot whose
/// length byte has its top bit clear gets a well-formed payload naming session `s<first payload byte % 4>`,
/// so the index sees sessions come and go; every other payload is the input's bytes. Accepts are what a
/// writer produces: at least their time and flags, and a seq written again (compaction copies a record)
/// has the same bytes as the first time.
func instructions(_ input: [UInt8]) -> (limits: ActionLogLimits, steps: [Instruction]) {
    guard input.count >= 2 else { return (ActionLogLimits(), []) }
    let limits = ActionLogLimits(count: Int(input[0] % 8), bytes: Int(input[1]) * 4)
    var steps: [Instruction] = []
    var accepts: [UInt64: [UInt8]] = [:]
    var offset = 2
    while offset + 4 <= input.count {
        let kindByte = input[offset]
        let keyByte = input[offset + 1]
        let number = UInt64(input[offset + 2])
        let lengthByte = input[offset + 3]
        offset += 4
        guard let kind = RecordKind(kindByte, in: .file) else {
            steps.append(.newSegment)
            continue
        }
        let length = min(Int(lengthByte & 0x7F), input.count - offset)
        var payload = Array(input[offset..<(offset + length)])
        offset += length
        if kind == .snapshot, lengthByte & 0x80 == 0 {
            let id = "s\((payload.first ?? 0) % 4)"
            payload = []
            StoredSnapshot(
                id: id, reactor: "counter", version: number, lastSeq: 0, stub: false,
                state: Array(#"{"value":0}"#.utf8), actions: [], running: []
            )
            .encode(into: &payload)
        }
        if kind == .accept {
            // Keys are never reused, so an accept's seq and key name it for good.
            let name = UInt64(keyByte % 8) << 32 | number
            if payload.count < StoredAccept.headerBytes {
                payload += [UInt8](repeating: 0, count: StoredAccept.headerBytes - payload.count)
            }
            payload = accepts[name] ?? payload
            accepts[name] = payload
        }
        steps.append(.record(JournalRecord(kind: kind, key: UInt32(keyByte % 8), number: number, payload: payload)))
    }
    return (limits, steps)
}

/// Writes the input's records into segments, reads each segment back as the start-up scan does (every
/// record found, in order, unchanged) and applies them to an index, checking its bookkeeping each time.
func checkWrittenRecords(_ input: [UInt8]) {
    let (limits, steps) = instructions(input)
    var segments: [[JournalRecord]] = [[]]
    for step in steps {
        switch step {
        case .newSegment: segments.append([])
        case .record(let record): segments[segments.count - 1].append(record)
        }
    }
    var index = JournalIndex()
    index.actionLogLimits = limits
    for (number, records) in segments.enumerated() {
        var bytes: [UInt8] = []
        for record in records {
            let written = JournalRecord.append(kind: record.kind, key: record.key, number: record.number, to: &bytes) {
                $0.append(contentsOf: record.payload)
            }
            expect(written, "a small record was refused")
        }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            for record in records {
                let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                guard case .record(let read, let size) = JournalRecord.parse(rest) else {
                    fail("a written record does not read back at \(offset)")
                }
                expect(read == record, "a written record reads back changed: \(record) vs \(read)")
                let identity =
                    read.kind == .snapshot
                    ? StoredSnapshot.identity(
                        payload: UnsafeRawBufferPointer(
                            rebasing: rest[(JournalRecord.frameBytes + JournalRecord.headerBytes)..<size])) : nil
                let location = RecordLocation(segment: UInt32(number + 1), offset: UInt32(offset), length: UInt32(size))
                index.apply(kind: read.kind, key: read.key, number: read.number, location: location, identity: identity)
                checkIndex(index, after: read)
                offset += size
            }
            expect(offset == raw.count, "\(raw.count - offset) bytes left after the records written")
        }
    }
}

/// The index's bookkeeping: the segment pins count exactly the sessions pinned there, each session is
/// pinned at the oldest segment it needs, ids and keys agree, and each retained action log is within
/// its limits, in seq order, with its byte count right.
func checkIndex(_ index: JournalIndex, after record: JournalRecord) {
    // Built only when an oracle breaks: interpolating an enum on every record and run was most of the
    // harness's time (its allocations), not the code under test's.
    func context() -> String { "after a \(record.kind) record of key \(record.key) number \(record.number)" }
    var pinned: [UInt32: Int] = [:]
    for (key, entry) in index.entries {
        pinned[entry.pinned, default: 0] += 1
        expect(
            entry.pinned == entry.oldestSegment,
            "key \(key) is pinned at segment \(entry.pinned) but needs \(entry.oldestSegment) \(context())")
        expect(
            entry.version >= entry.snapshotVersion,
            "key \(key) has version \(entry.version) below its snapshot's \(entry.snapshotVersion) \(context())")
        expect(index.nextKey > key, "next key \(index.nextKey) is not above key \(key) \(context())")
        let retained = entry.retainedAccepts
        expect(
            retained.count <= index.actionLogLimits.count, "key \(key) retains \(retained.count) accepts \(context())")
        expect(
            zip(retained, retained.dropFirst()).allSatisfy { $0.seq < $1.seq },
            "key \(key) retains accepts out of order \(context())")
        expect(
            retained.allSatisfy { $0.seq > entry.actionLogSeq },
            "key \(key) retains accepts its checkpoint covers \(context())")
        let bytes = retained.reduce(0) { $0 + StoredAccept.actionBytes($1.location) }
        expect(
            bytes == entry.acceptBytes,
            "key \(key) counts \(entry.acceptBytes) accept bytes, holds \(bytes) \(context())")
        checkHistory(entry.history, key: key, context)
    }
    expect(pinned == index.pins, "pins \(index.pins) but sessions pinned at \(pinned) \(context())")
    for (id, key) in index.keys {
        expect(
            index.entries[key]?.id == id,
            "id \(id) maps to key \(key), which holds \(String(describing: index.entries[key]?.id)) \(context())")
    }
}

/// A session's retained history: a snapshot first, records in version order (a state record before
/// the snapshot of its version), its byte count and oldest segment right.
func checkHistory(_ history: RetainedHistory, key: UInt32, _ context: () -> String) {
    let records = history.retained
    guard let first = records.first else {
        let empty = history.bytes == 0 && history.oldestSegment == nil
        return expect(empty, "key \(key): an empty history counts bytes or a segment \(context())")
    }
    expect(first.kind == .snapshot && history.baseVersion == first.number, "key \(key): history's base \(context())")
    let ordered = zip(records, records.dropFirst()).allSatisfy { RetainedHistory.order($0, $1) }
    expect(ordered, "key \(key): history out of order \(context())")
    let bytes = records.reduce(0) { $0 + Int($1.location.length) }
    expect(history.bytes == bytes, "key \(key): history counts \(history.bytes) bytes, holds \(bytes) \(context())")
    let oldest = records.map(\.location.segment).min()
    expect(history.oldestSegment == oldest, "key \(key): history's oldest segment \(context())")
}

/// An oracle: prints `message` and aborts when `condition` is false. (`precondition` traps without its
/// message in an optimized build, which would leave only the input to guess from.)
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// Prints `message` and aborts: the fuzzer saves the input.
func fail(_ message: String) -> Never {
    fputs("JournalFuzz: \(message)\n", stderr)
    abort()
}
