/// One record, or one piece of it, inside a message of a session's subject. A message carries one or
/// more frames, each `[u8 kind][u8 flags][u64 number][u32 length][body]` (little-endian): what one
/// publish carried (a session's records are sent in batches, one publish in flight at a time). A
/// record larger than a message continues in the frames of the next messages (flag bit 0 set on
/// every piece but the last); the reader joins them, and a record whose last piece never arrived (its
/// writer stopped) counts for nothing.
///
/// The kinds and payloads are the file journal's (``RecordKind`` says which kinds a stream holds: the
/// fence a new owner writes first is the stream's alone).
struct RecordFrame: Sendable, Equatable {
    /// Bytes of a frame before its body.
    static let headerBytes = 14

    var kind: RecordKind
    /// The version of a state record, the seq of an action record, 0 otherwise.
    var number: UInt64
    /// Whether the record goes on in the next frame.
    var continues: Bool
    var body: ArraySlice<UInt8>

    /// Appends a frame to `buffer`.
    static func append(
        kind: RecordKind, number: UInt64, continues: Bool, body: ArraySlice<UInt8>, to buffer: inout [UInt8]
    ) {
        buffer.append(kind.rawValue)
        buffer.append(continues ? 1 : 0)
        buffer.appendLittleEndian(number)
        buffer.appendLittleEndian(UInt32(body.count))
        buffer.append(contentsOf: body)
    }

    /// What reading a frame found.
    enum Parse: Equatable {
        /// A frame, and the bytes it took.
        case frame(RecordFrame, size: Int)
        /// Bytes that no writer of frames produced: why.
        case corrupt(String)
    }

    /// Reads the frame at the start of `bytes` (a message's payload from some offset on). A message
    /// holds whole frames only, so bytes that end inside one are corrupt too.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Parse {
        guard bytes.count >= headerBytes else { return .corrupt("a frame is cut off after \(bytes.count) bytes") }
        let start = bytes.startIndex
        guard let kind = RecordKind(bytes[start], in: .stream) else {
            return .corrupt("a frame has the unknown kind \(bytes[start])")
        }
        let flags = bytes[start + 1]
        guard flags & ~1 == 0 else { return .corrupt("a frame has unknown flags \(flags)") }
        let number = bytes.withUnsafeBytes { $0.loadLittleEndian(UInt64.self, at: 2) }
        let length = Int(bytes.withUnsafeBytes { $0.loadLittleEndian(UInt32.self, at: 10) })
        guard bytes.count - headerBytes >= length else {
            return .corrupt("a frame announces \(length) bytes and has \(bytes.count - headerBytes)")
        }
        let body = bytes[(start + headerBytes)..<(start + headerBytes + length)]
        return .frame(
            RecordFrame(kind: kind, number: number, continues: flags & 1 != 0, body: body), size: headerBytes + length)
    }

    /// Every frame of a message's payload, in order; the reason when it holds anything else.
    static func frames(of payload: [UInt8]) -> Result<[RecordFrame], RecordDamage> {
        var frames: [RecordFrame] = []
        var rest = payload[...]
        while !rest.isEmpty {
            switch parse(rest) {
            case .frame(let frame, let size):
                frames.append(frame)
                rest = rest.dropFirst(size)
            case .corrupt(let reason):
                return .failure(RecordDamage(reason: reason))
            }
        }
        return .success(frames)
    }
}

/// Why stored bytes are not what a writer of this backend wrote.
struct RecordDamage: Error, Sendable, Equatable, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// A whole record, its pieces joined, and the stream sequence of the message that completed it.
struct StoredRecord: Sendable, Equatable {
    var kind: RecordKind
    var number: UInt64
    var payload: [UInt8]
    var sequence: UInt64

    /// The record as the file journal's merge reads it (it is not a fence).
    var journalRecord: JournalRecord? {
        kind.formats.contains(.file) ? JournalRecord(kind: kind, key: 0, number: number, payload: payload) : nil
    }
}

/// Joins frames into records, message after message, as a session's subject is read back.
struct RecordAssembler {
    private var partial: (kind: RecordKind, number: UInt64, payload: [UInt8])?

    /// The records the message at `sequence` completes; a damaged message is reported, not skipped.
    mutating func add(_ payload: [UInt8], sequence: UInt64) -> Result<[StoredRecord], RecordDamage> {
        let frames: [RecordFrame]
        switch RecordFrame.frames(of: payload) {
        case .success(let found): frames = found
        case .failure(let damage): return .failure(RecordDamage(reason: "message \(sequence): \(damage.reason)"))
        }
        var records: [StoredRecord] = []
        for frame in frames {
            if var piece = partial {
                // A record's pieces share kind and number; anything else means its writer stopped mid-record
                // (a new owner's fence follows), so the unfinished record counts for nothing.
                if piece.kind == frame.kind && piece.number == frame.number {
                    piece.payload.append(contentsOf: frame.body)
                    partial = nil
                    if frame.continues {
                        partial = piece
                    } else {
                        records.append(
                            StoredRecord(
                                kind: piece.kind, number: piece.number, payload: piece.payload, sequence: sequence))
                    }
                    continue
                }
                partial = nil
            }
            if frame.continues {
                partial = (frame.kind, frame.number, Array(frame.body))
            } else {
                records.append(
                    StoredRecord(kind: frame.kind, number: frame.number, payload: Array(frame.body), sequence: sequence)
                )
            }
        }
        return .success(records)
    }
}
