/// One record of the journal. On disk: `[u32 body length][u32 CRC-32C of body][body]`, little-endian,
/// where the body is `[u8 kind][u32 session key][u64 number][payload]`. `number` is the version for
/// state records and the seq for action records, so the start-up scan indexes sessions from headers
/// without decoding any JSON.
@usableFromInline
struct JournalRecord: Sendable, Equatable {
    /// The first bytes of a padding record `size` bytes long (frame included), up to its payload: what
    /// overwrites a deleted session's record once its payload is zeros.
    static func paddingHeader(size: Int) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: size - frameBytes)
        body[0] = RecordKind.padding.rawValue
        var header: [UInt8] = []
        header.appendLittleEndian(UInt32(body.count))
        header.appendLittleEndian(CRC32C.checksum(body))
        header.append(contentsOf: body[..<headerBytes])
        return header
    }

    var kind: RecordKind
    var key: UInt32
    var number: UInt64
    var payload: [UInt8]

    /// Bytes before the body: length and checksum.
    static let frameBytes = 8
    /// Bytes of the body before the payload: kind, key, number.
    static let headerBytes = 13
    /// The largest body a record may have, for the writer and the reader alike: twice the largest
    /// state limit a server can be configured with (64 MiB), so a snapshot of a state at the limit fits
    /// with its bookkeeping, and so does an action the journal accepted (see ``maxActionBytes``). The
    /// writer refuses a larger record; the reader takes a larger announced length for corruption.
    static let maxBodyBytes = 128 << 20
    /// The largest action JSON that fits both in an accept record and alone in an action-log chunk.
    static let maxActionBytes =
        maxBodyBytes - headerBytes - StoredActionLog.chunkHeaderBytes - StoredActionLog.entryHeaderBytes

    /// Appends the framed record to `buffer`; false (and `buffer` as it was) when the body would be
    /// larger than ``maxBodyBytes``: nothing is ever written that the reader would refuse.
    @discardableResult
    static func append(
        kind: RecordKind, key: UInt32, number: UInt64, to buffer: inout [UInt8], payload: (inout [UInt8]) -> Void
    ) -> Bool {
        let start = buffer.count
        // The frame (length and checksum, stored below) and the header, made on the stack and appended in
        // one go: 21 appends of a byte each cost ~300 instructions per record (two records per action).
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { header in
            header.storeBytes(of: kind.rawValue, toByteOffset: frameBytes, as: UInt8.self)
            header.storeBytes(of: key.littleEndian, toByteOffset: frameBytes + 1, as: UInt32.self)
            header.storeBytes(of: number.littleEndian, toByteOffset: frameBytes + 5, as: UInt64.self)
            buffer.append(
                contentsOf: UnsafeBufferPointer(
                    start: header.baseAddress!.assumingMemoryBound(to: UInt8.self), count: frameBytes + headerBytes))
        }
        payload(&buffer)
        let length = buffer.count - start - frameBytes
        guard length <= maxBodyBytes else {
            buffer.removeSubrange(start...)
            return false
        }
        let crc = buffer.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(start + frameBytes)...]))
        }
        buffer.storeLittleEndian(UInt32(length), at: start)
        buffer.storeLittleEndian(crc, at: start + 4)
        return true
    }

    /// The record's encoded bytes.
    var encoded: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.frameBytes + Self.headerBytes + payload.count)
        Self.append(kind: kind, key: key, number: number, to: &buffer) { $0.append(contentsOf: payload) }
        return buffer
    }

    /// The record as a state record (a mutation or a forced state), nil for any other kind.
    var storedState: StoredState? {
        switch kind {
        case .mutation: StoredState(kind: .mutation, version: number, payload: payload)
        case .forced: StoredState(kind: .forced, version: number, payload: payload)
        default: nil
        }
    }

    /// Why bytes are not a record a writer of this journal produced.
    enum Damage: Equatable, CustomStringConvertible {
        /// The frame announces a body no writer produces (shorter than a header, longer than ``maxBodyBytes``).
        case impossibleLength(Int)
        /// The body does not match the frame's checksum.
        case checksumMismatch
        /// The checksum matches but the kind byte names no record kind.
        case unknownKind(UInt8)

        var description: String {
            switch self {
            case .impossibleLength(let length):
                return "announces an impossible length (\(length) bytes; records are \(headerBytes) to \(maxBodyBytes))"
            case .checksumMismatch: return "fails its checksum"
            case .unknownKind(let kind): return "has an unknown kind (\(kind))"
            }
        }
    }

    /// What reading a record at an offset found.
    enum Parse: Equatable {
        case record(JournalRecord, size: Int)
        /// The bytes end inside a frame whose announced length is possible: a write cut short, when
        /// this is the end of the newest segment.
        case truncated
        /// A frame no writer produces; `size` is its announced size when that is possible.
        case corrupt(Damage, size: Int?)
    }

    /// Reads the record at the start of `bytes`; `withPayload: false` skips copying the payload.
    static func parse(_ bytes: UnsafeRawBufferPointer, withPayload: Bool = true) -> Parse {
        guard bytes.count >= 4 else { return .truncated }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: 0))
        guard length >= headerBytes, length <= maxBodyBytes else {
            return .corrupt(.impossibleLength(length), size: nil)
        }
        guard bytes.count >= frameBytes + length else { return .truncated }
        let body = UnsafeRawBufferPointer(rebasing: bytes[frameBytes..<(frameBytes + length)])
        guard CRC32C.checksum(body) == bytes.loadLittleEndian(UInt32.self, at: 4) else {
            return .corrupt(.checksumMismatch, size: frameBytes + length)
        }
        guard let kind = RecordKind(body[0], in: .file) else {
            return .corrupt(.unknownKind(body[0]), size: frameBytes + length)
        }
        let record = JournalRecord(
            kind: kind, key: body.loadLittleEndian(UInt32.self, at: 1),
            number: body.loadLittleEndian(UInt64.self, at: 5),
            payload: withPayload ? Array(body[headerBytes...]) : [])
        return .record(record, size: frameBytes + length)
    }
}

extension [UInt8] {
    @inline(__always)
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        // Low byte first, byte by byte: appending the value's raw bytes as a collection ran generic code.
        var bits = value
        for _ in 0..<MemoryLayout<T>.size {
            append(UInt8(truncatingIfNeeded: bits))
            bits = bits >> 8
        }
    }

    @inline(__always)
    mutating func storeLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }

    /// A length-prefixed (u32) byte string.
    mutating func appendBlob(_ bytes: [UInt8]) {
        appendLittleEndian(UInt32(bytes.count))
        append(contentsOf: bytes)
    }

    /// A length-prefixed (u8) short string such as an id or a reactor name.
    mutating func appendShortString(_ string: String) {
        let bytes = Array(string.utf8.prefix(255))
        append(UInt8(bytes.count))
        append(contentsOf: bytes)
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always)
    func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// Reads a payload front to back; every read checks bounds and throws ``PayloadError`` when short.
struct PayloadReader {
    let bytes: [UInt8]
    var offset = 0

    struct PayloadError: Error, CustomStringConvertible {
        var description: String
    }

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws(PayloadError) -> T {
        let size = MemoryLayout<T>.size
        guard offset + size <= bytes.count else { throw PayloadError(description: "the record ends inside a field") }
        let value = bytes.withUnsafeBytes { $0.loadLittleEndian(T.self, at: offset) }
        offset += size
        return value
    }

    mutating func blob() throws(PayloadError) -> [UInt8] {
        let count = Int(try integer(UInt32.self))
        guard offset + count <= bytes.count else { throw PayloadError(description: "the record ends inside a field") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func shortString() throws(PayloadError) -> String {
        let count = Int(try integer(UInt8.self))
        guard offset + count <= bytes.count else { throw PayloadError(description: "the record ends inside a field") }
        defer { offset += count }
        // Strict: this process writes only UTF-8 here, so bytes that are not are damage, not text to repair (a
        // repaired string would be written back longer than it was read).
        guard let text = String(validating: bytes[offset..<(offset + count)], as: UTF8.self) else {
            throw PayloadError(description: "a text field is not UTF-8")
        }
        return text
    }

    /// The bytes not read yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}
