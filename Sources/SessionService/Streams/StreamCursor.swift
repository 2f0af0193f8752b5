/// The `id:` of a multiplexed stream's events: where each of its sessions has got, so that the client's
/// `Last-Event-ID` resumes all of them (API.md: "an opaque cursor for the whole stream").
///
/// Format: eight hex digits naming the list of sessions (FNV-1a of `sessions=` as sent, so a cursor is
/// not applied to another list), a colon, then for each session in that order the version of its last
/// state sent (nothing before the first) and, when the session's incarnation is known, `~` and its mark
/// (hex), separated by dots: `3f0c9a1e:12~9c1f2a07..7~1b` (a at 12, b nothing yet, c at 7). A cursor that
/// does not match the list is ignored: every session starts from its current state. A position whose mark
/// is not the session's current one was read from an earlier session with that id (deleted, created
/// again): that session starts from its current state too.
struct StreamCursor: Sendable, Equatable {
    /// The hex digits naming the list of sessions.
    let list: [UInt8]
    /// Per session, in the order of the list: the last version sent, nil before the first.
    var positions: [UInt64?]
    /// Per session: its incarnation's mark (``mark(of:)``), 0 when unknown.
    let marks: [UInt32]
    /// Per session: `~` and the mark in hex, or nothing; written after its position in every `id:`.
    private let suffixes: [[UInt8]]

    /// A cursor at the start of the stream of `sessions` (each from its current state), marked with their
    /// incarnations (`SessionStore/incarnation(of:)`; none: unknown).
    init(sessions: [String], incarnations: [UInt64] = []) {
        list = Self.name(of: sessions)
        positions = Array(repeating: nil, count: sessions.count)
        marks = sessions.indices.map { $0 < incarnations.count ? Self.mark(of: incarnations[$0]) : 0 }
        suffixes = marks.map(Self.suffix)
    }

    /// The cursor `text` (a `Last-Event-ID`) if it belongs to the stream of `sessions`; else nil.
    init?(_ text: String, sessions: [String]) {
        let bytes = Array(text.utf8)
        let list = Self.name(of: sessions)
        guard bytes.count > list.count, bytes.starts(with: list), bytes[list.count] == UInt8(ascii: ":") else {
            return nil
        }
        let fields = bytes[(list.count + 1)...].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard fields.count == sessions.count else { return nil }
        var positions: [UInt64?] = []
        var marks: [UInt32] = []
        positions.reserveCapacity(fields.count)
        marks.reserveCapacity(fields.count)
        for field in fields {
            let parts = field.split(separator: UInt8(ascii: "~"), maxSplits: 1, omittingEmptySubsequences: false)
            let digits = parts[0]
            if digits.isEmpty {
                positions.append(nil)
            } else {
                // Digits only (UInt64(_:) would also take a sign), and no more than a version has.
                guard digits.count <= 20, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    let version = UInt64(String(decoding: digits, as: UTF8.self))
                else { return nil }
                positions.append(version)
            }
            guard parts.count == 2 else {
                marks.append(0)
                continue
            }
            let hex = parts[1]
            guard (1...8).contains(hex.count), hex.allSatisfy({ Self.hexDigits.contains($0) }),
                let mark = UInt32(String(decoding: hex, as: UTF8.self), radix: 16), mark != 0
            else { return nil }
            marks.append(mark)
        }
        self.list = list
        self.positions = positions
        self.marks = marks
        suffixes = marks.map(Self.suffix)
    }

    /// The positions of this cursor (the client's) that hold for sessions now marked as `current` says:
    /// a position is dropped (its session starts from the current state) when both marks are known and
    /// differ.
    func positions(resumingOn current: StreamCursor) -> [UInt64?] {
        positions.indices.map { index in
            let (mine, now) = (marks[index], index < current.marks.count ? current.marks[index] : 0)
            return mine != 0 && now != 0 && mine != now ? nil : positions[index]
        }
    }

    /// An incarnation's mark in a cursor: its low 32 bits (8 hex digits at most; a deleted session and a
    /// new one with the same id share it once in four billion times).
    static func mark(of incarnation: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: incarnation) }

    /// Lower-case hex digits.
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `~` and the mark in lower-case hex; nothing for an unknown mark.
    private static func suffix(_ mark: UInt32) -> [UInt8] {
        mark == 0 ? [] : Array("~\(String(mark, radix: 16))".utf8)
    }

    /// The cursor as text, for `id:`.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The cursor's bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(list.count + 1 + positions.count * 13)
        append(to: &out)
        return out
    }

    /// Appends the cursor's bytes to `out`.
    func append(to out: inout [UInt8]) {
        out.append(contentsOf: list)
        out.append(UInt8(ascii: ":"))
        for (index, position) in positions.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ".")) }
            if let value = position {
                // Most significant digit first (reversing a slice afterwards cost a few hundred instructions).
                var divisor: UInt64 = 1
                while value / divisor >= 10 { divisor *= 10 }
                repeat {
                    out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                    divisor /= 10
                } while divisor > 0
            }
            out.append(contentsOf: suffixes[index])
        }
    }

    /// Eight lower-case hex digits of the 32-bit FNV-1a hash of the ids joined by commas.
    static func name(of sessions: [String]) -> [UInt8] {
        var hash: UInt32 = 0x811c_9dc5
        for (index, id) in sessions.enumerated() {
            if index > 0 { hash = (hash ^ UInt32(UInt8(ascii: ","))) &* 0x0100_0193 }
            for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        }
        return (0..<8).reversed().map { hexDigits[Int((hash >> (UInt32($0) * 4)) & 0xf)] }
    }
}
