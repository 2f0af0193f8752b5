/// The `id:` of a multiplexed stream's events: where each of its sessions has got, so that the client's
/// `Last-Event-ID` resumes all of them (API.md: "an opaque cursor for the whole stream").
///
/// Format: eight hex digits naming the list of sessions (FNV-1a of `sessions=` as sent, so a cursor is
/// not applied to another list), a colon, then for each session in that order the version of its last
/// state sent, or nothing before the first, separated by dots: `3f0c9a1e:12..7` (a at 12, b nothing yet,
/// c at 7). A cursor that does not match the list is ignored: every session starts from its current state.
struct StreamCursor: Sendable, Equatable {
    /// The hex digits naming the list of sessions.
    let list: [UInt8]
    /// Per session, in the order of the list: the last version sent, nil before the first.
    var positions: [UInt64?]

    /// A cursor at the start of the stream of `sessions` (each from its current state).
    init(sessions: [String]) {
        list = Self.name(of: sessions)
        positions = Array(repeating: nil, count: sessions.count)
    }

    /// The cursor `text` (a `Last-Event-ID`) if it belongs to the stream of `sessions`; else nil.
    init?(_ text: String, sessions: [String]) {
        let bytes = Array(text.utf8)
        let list = Self.name(of: sessions)
        guard bytes.count > list.count, bytes.starts(with: list), bytes[list.count] == UInt8(ascii: ":") else { return nil }
        let fields = bytes[(list.count + 1)...].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard fields.count == sessions.count else { return nil }
        var positions: [UInt64?] = []
        positions.reserveCapacity(fields.count)
        for field in fields {
            if field.isEmpty {
                positions.append(nil)
            } else {
                // Digits only (UInt64(_:) would also take a sign), and no more than a version has.
                guard field.count <= 20, field.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                      let version = UInt64(String(decoding: field, as: UTF8.self)) else { return nil }
                positions.append(version)
            }
        }
        self.list = list
        self.positions = positions
    }

    /// The cursor as text, for `id:`.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The cursor's bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(list.count + 1 + positions.count * 4)
        append(to: &out)
        return out
    }

    /// Appends the cursor's bytes to `out`.
    func append(to out: inout [UInt8]) {
        out.append(contentsOf: list)
        out.append(UInt8(ascii: ":"))
        for (index, position) in positions.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ".")) }
            guard let value = position else { continue }
            // Most significant digit first (reversing a slice afterwards cost a few hundred instructions).
            var divisor: UInt64 = 1
            while value / divisor >= 10 { divisor *= 10 }
            repeat {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            } while divisor > 0
        }
    }

    /// Eight lower-case hex digits of the 32-bit FNV-1a hash of the ids joined by commas.
    static func name(of sessions: [String]) -> [UInt8] {
        var hash: UInt32 = 0x811c_9dc5
        for (index, id) in sessions.enumerated() {
            if index > 0 { hash = (hash ^ UInt32(UInt8(ascii: ","))) &* 0x0100_0193 }
            for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        }
        let digits = Array("0123456789abcdef".utf8)
        return (0..<8).reversed().map { digits[Int((hash >> (UInt32($0) * 4)) & 0xf)] }
    }
}
