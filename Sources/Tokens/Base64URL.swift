/// Base64url without padding (RFC 4648 §5, as JWS and our tokens use it), with a strict decoder.
///
/// Strict means every text has exactly one decoding and every byte string exactly one text:
/// `=`, `+`, `/`, whitespace, a length of 4n+1 and non-zero bits after the last byte are all refused,
/// so `encode(decode(text)) == text` whenever decoding succeeds.
///
/// ```swift
/// Base64URL.encode([0xfb, 0xff])       // "-_8"
/// try Base64URL.decode("-_8".utf8)     // [0xfb, 0xff]
/// try Base64URL.decode("-_8=".utf8)    // throws: padding is not used
/// ```
public enum Base64URL {
    /// The 64 characters in value order: `A–Z a–z 0–9 - _`.
    static let alphabet: [UInt8] = [
        65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90,
        97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117,
        118, 119, 120, 121, 122, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 45, 95,
    ]

    /// The value of each byte as a character, or 0xFF when it is not in the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for value in 0..<64 { table[Int(alphabet[value])] = UInt8(value) }
        return table
    }()

    /// The unpadded text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encodedBytes(bytes), as: UTF8.self)
    }

    /// The unpadded text of `bytes`, as ASCII bytes.
    public static func encodedBytes(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let alphabet = alphabet
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var group: UInt32 = 0
        var filled = 0
        for byte in bytes {
            group = group << 8 | UInt32(byte)
            filled += 1
            if filled == 3 {
                out.append(alphabet[Int(group >> 18 & 63)])
                out.append(alphabet[Int(group >> 12 & 63)])
                out.append(alphabet[Int(group >> 6 & 63)])
                out.append(alphabet[Int(group & 63)])
                group = 0
                filled = 0
            }
        }
        if filled == 1 {
            out.append(alphabet[Int(group >> 2 & 63)])
            out.append(alphabet[Int(group << 4 & 63)])
        } else if filled == 2 {
            out.append(alphabet[Int(group >> 10 & 63)])
            out.append(alphabet[Int(group >> 4 & 63)])
            out.append(alphabet[Int(group << 2 & 63)])
        }
        return out
    }

    /// The bytes `text` encodes, or why it is not strict unpadded base64url.
    public static func decode(_ text: some Collection<UInt8>) throws(Base64URLError) -> [UInt8] {
        let count = text.count
        var out = [UInt8]()
        out.reserveCapacity(count * 3 / 4)
        var group: UInt32 = 0
        var filled = 0
        var offset = 0
        // Read once per call instead of a lazy-global check per character.
        let table = values
        for byte in text {
            let value = table[Int(byte)]
            guard value != 0xFF else { throw Base64URLError(reason: .invalidCharacter, offset: offset, byte: byte) }
            group = group << 6 | UInt32(value)
            filled += 1
            if filled == 4 {
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                out.append(UInt8(truncatingIfNeeded: group >> 8))
                out.append(UInt8(truncatingIfNeeded: group))
                group = 0
                filled = 0
            }
            offset += 1
        }
        // A lone character carries 6 bits: not even one byte. (Checked after the characters, whose errors say more.)
        guard filled != 1 else { throw Base64URLError(reason: .impossibleLength, offset: count - 1, byte: nil) }
        // The last character of a partial group carries bits beyond the last byte; they must be zero (RFC 4648 §3.5).
        switch filled {
        case 2:
            guard group & 0xF == 0 else {
                throw Base64URLError(reason: .nonZeroTrailingBits, offset: count - 1, byte: nil)
            }
            out.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            guard group & 0x3 == 0 else {
                throw Base64URLError(reason: .nonZeroTrailingBits, offset: count - 1, byte: nil)
            }
            out.append(UInt8(truncatingIfNeeded: group >> 10))
            out.append(UInt8(truncatingIfNeeded: group >> 2))
        default:
            break
        }
        return out
    }
}
