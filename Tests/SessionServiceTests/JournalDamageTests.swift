import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// Real segment files with bad bytes written into them, then a restart: only a write cut short at the
/// very end of the newest segment is cut off; every other damage is corruption, kept on disk byte for
/// byte, reported with its place, and its session quarantined (409 `session_unavailable`).
@Suite(.offThePool) struct JournalDamageTests {
    /// Sessions "damaged" (key 1) and "healthy" (key 2) with two and one actions, in one segment.
    static func twoSessions(_ directory: String, _ configure: @escaping (inout ServerConfiguration) -> Void = { _ in })
        throws
    {
        let server = try TestServer(dataDirectory: directory, configure: configure)
        _ = try server.createSession("counter", id: "damaged")
        _ = try server.createSession("counter", id: "healthy")
        for id in ["damaged", "damaged", "healthy"] {
            #expect(
                try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    /// A frame header (length, checksum) and body start naming session key `key`.
    static func frame(length: UInt32, checksum: UInt32 = 0, kind: UInt8 = 2, key: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(length)
        bytes.appendLittleEndian(checksum)
        bytes.append(kind)
        bytes.appendLittleEndian(key)
        return bytes
    }

    /// Restarts on `directory` and checks that "damaged" is quarantined for `reason`, "healthy" is
    /// served, every segment is byte for byte what it was, and the damage was logged with its place.
    static func expectCorruption(_ directory: String, reason: String, at offset: Int) throws {
        let before = try DurabilityTests.segments(directory).map { ($0, try bytes($0)) }
        let server = try TestServer(dataDirectory: directory)
        let damaged = try server.request("GET", "/sessions/damaged")
        #expect(damaged.status == 409)
        #expect(damaged.errorCode == "session_unavailable")
        #expect(damaged.errorMessage?.contains(reason) == true, "\(damaged.text)")
        #expect(damaged.errorMessage?.contains("offset \(offset)") == true, "\(damaged.text)")
        #expect(try server.request("GET", "/sessions/healthy").json()["version"] as? Int == 1)
        for (path, content) in before {
            #expect(try bytes(path) == content, "\(path) was changed")
        }
        let logged = server.logs.values.filter { $0.message.contains("damaged journal record") }
        #expect(logged.count == 1)
        #expect(logged.first?.fields.contains { $0.key == "offset" && $0.value == .int(offset) } == true)
        #expect(!server.logs.values.contains { $0.message.contains("cut off") })
        // A new action goes to a new segment, never after the damaged bytes.
        #expect(
            try server.request("POST", "/sessions/healthy/actions?wait=true", body: #"{"type":"increase"}"#).status
                == 200)
        for (path, content) in before {
            #expect(try bytes(path) == content, "\(path) was written after its damage")
        }
    }

    @Test func aRecordCutShortAtTheEndOfTheNewestSegmentIsCutOff() throws {
        try withTemporaryDirectory("journaldamage") { directory in
            try Self.twoSessions(directory)
            let segment = try #require(try DurabilityTests.segments(directory).last)
            let size = try Self.bytes(segment).count
            // A frame announcing 40 bytes of which only 5 arrived.
            try Self.append(Self.frame(length: 40, key: 1), to: segment)
            let server = try TestServer(dataDirectory: directory)
            #expect(try server.request("GET", "/sessions/damaged").json()["version"] as? Int == 2)
            #expect(try Self.bytes(segment).count == size)
            let line = try #require(
                server.logs.values.first {
                    $0.message.contains("cut off an incomplete record at the end of the newest journal segment")
                })
            #expect(line.fields.contains { $0.key == "dropped_bytes" && $0.value == .int(13) })
        }
    }

    @Test func anImpossibleLengthIsCorruptionEvenAtTheEnd() throws {
        try withTemporaryDirectory("journaldamage") { directory in
            try Self.twoSessions(directory)
            let segment = try #require(try DurabilityTests.segments(directory).last)
            let offset = try Self.bytes(segment).count
            // 2 GiB announced: more than any writer writes (the old reader took this for a torn tail).
            try Self.append(Self.frame(length: 0x8000_0000, key: 1) + [UInt8](repeating: 7, count: 20), to: segment)
            try Self.expectCorruption(directory, reason: "impossible length", at: offset)
        }
    }

    @Test func aChecksumMismatchInTheLastRecordIsCorruption() throws {
        try withTemporaryDirectory("journaldamage") { directory in
            try Self.twoSessions(directory)
            let segment = try #require(try DurabilityTests.segments(directory).last)
            let offset = try Self.bytes(segment).count
            var record = JournalRecord(kind: .mutation, key: 1, number: 3, payload: Array(#"{"type":"increase"}"#.utf8))
                .encoded
            record[record.count - 2] ^= 0x01
            try Self.append(record, to: segment)
            try Self.expectCorruption(directory, reason: "fails its checksum", at: offset)
        }
    }

    @Test func anUnknownKindIsCorruption() throws {
        try withTemporaryDirectory("journaldamage") { directory in
            try Self.twoSessions(directory)
            let segment = try #require(try DurabilityTests.segments(directory).last)
            let offset = try Self.bytes(segment).count
            var body: [UInt8] = [42]
            body.appendLittleEndian(UInt32(1))
            body.appendLittleEndian(UInt64(3))
            var record: [UInt8] = []
            record.appendLittleEndian(UInt32(body.count))
            record.appendLittleEndian(CRC32C.checksum(body))
            try Self.append(record + body, to: segment)
            try Self.expectCorruption(directory, reason: "unknown kind (42)", at: offset)
        }
    }

    @Test func aFrameCutShortWithAGoodRecordAfterItIsCorruption() throws {
        try withTemporaryDirectory("journaldamage") { directory in
            try Self.twoSessions(directory)
            let segment = try #require(try DurabilityTests.segments(directory).last)
            let offset = try Self.bytes(segment).count
            // Announces 1,000 bytes (possible), of which only 20 follow, then a whole record: not a torn tail.
            let good = JournalRecord(kind: .complete, key: 999, number: 1, payload: []).encoded
            try Self.append(Self.frame(length: 1000, key: 1) + [UInt8](repeating: 0, count: 11) + good, to: segment)
            try Self.expectCorruption(directory, reason: "ends before the record it announces is complete", at: offset)
        }
    }

    @Test func aRecordCutShortInAnOlderSegmentIsCorruption() throws {
        try withTemporaryDirectory("journaldamage") { directory in
            try Self.twoSessions(directory)
            // A restart starts a new segment; one more action of "healthy" goes there.
            do {
                let server = try TestServer(dataDirectory: directory)
                #expect(
                    try server.request("POST", "/sessions/healthy/actions?wait=true", body: #"{"type":"increase"}"#)
                        .status == 200)
            }
            let segments = try DurabilityTests.segments(directory)
            #expect(segments.count == 2)
            // The first segment ends with "healthy"'s records; "damaged"'s second mutation lies before them.
            // Cut the first segment inside its last record: an older segment is never cut short by a crash.
            let first = try Self.bytes(segments[0])
            let records = Self.records(first)
            let last = try #require(records.last)
            try Data(first[..<(last.offset + 16)]).write(to: URL(fileURLWithPath: segments[0]))
            // Point the damage at "damaged": the cut frame names its key.
            var cut = try Self.bytes(segments[0])
            cut.storeLittleEndian(UInt32(1), at: last.offset + 9)
            try Data(cut).write(to: URL(fileURLWithPath: segments[0]))
            let before = try DurabilityTests.segments(directory).map { ($0, try Self.bytes($0)) }
            let server = try TestServer(dataDirectory: directory)
            let damaged = try server.request("GET", "/sessions/damaged")
            #expect(damaged.status == 409)
            #expect(
                damaged.errorMessage?.contains("ends before the record it announces is complete") == true,
                "\(damaged.text)")
            for (path, content) in before {
                #expect(try Self.bytes(path) == content, "\(path) was changed")
            }
            #expect(!server.logs.values.contains { $0.message.contains("cut off") })
        }
    }

    /// Offsets, sizes and keys of the whole records at the start of a segment's bytes.
    static func records(_ bytes: [UInt8]) -> [(offset: Int, size: Int, key: UInt32)] {
        var found: [(offset: Int, size: Int, key: UInt32)] = []
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count,
                case .record(let record, let size) = JournalRecord.parse(
                    UnsafeRawBufferPointer(rebasing: raw[offset...]), withPayload: false)
            {
                found.append((offset, size, record.key))
                offset += size
            }
        }
        return found
    }
}
