#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as 16 bytes (IPv4 as `::ffff:a.b.c.d`), for keying per-client limits
/// without strings.
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    var high: UInt64
    var low: UInt64

    /// Parses a numeric address (`203.0.113.7`, `2001:db8::1`, `[2001:db8::1]`); nil for anything else.
    init?(_ text: some StringProtocol) {
        var text = String(text)
        // Dotted IPv4 read straight from the bytes: this runs per request for the rate limits, where
        // copying to a C string for inet_pton cost more than the rest of the check.
        if let v4 = text.withUTF8({ Self.parseIPv4($0) }) {
            high = 0
            low = 0xFFFF_0000_0000 | UInt64(v4)
            return
        }
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            high = 0
            low = 0xFFFF_0000_0000 | UInt64(UInt32(bigEndian: v4.s_addr))
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
            low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        } else {
            return nil
        }
    }

    /// `a.b.c.d` with each part 0…255 and no leading zeros beyond a lone 0; nil otherwise.
    static func parseIPv4(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var part: UInt32 = 0
        var digits = 0
        var parts = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 3 else { return nil }
                value = value << 8 | part
                parts += 1
                part = 0
                digits = 0
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard digits < 3, !(digits == 1 && part == 0) else { return nil }
                part = part * 10 + UInt32(byte - UInt8(ascii: "0"))
                guard part <= 255 else { return nil }
                digits += 1
            } else {
                return nil
            }
        }
        guard digits > 0, parts == 3 else { return nil }
        return value << 8 | part
    }

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    var description: String {
        if isIPv4 {
            return [24, 16, 8, 0].map { String((low >> UInt64($0)) & 0xFF) }.joined(separator: ".")
        }
        let groups = (0..<8).map { index -> String in
            let word = index < 4 ? high >> UInt64(48 - index * 16) : low >> UInt64(48 - (index - 4) * 16)
            return String(word & 0xFFFF, radix: 16)
        }
        return groups.joined(separator: ":")
    }
}

/// A block of addresses (`10.0.0.0/8`, `fd00::/8`, or one address), for trusted proxies and exemptions.
struct IPNetwork: Sendable, Equatable {
    let base: IPAddress
    /// Prefix length over the 128-bit form (an IPv4 /8 is /104).
    let bits: Int

    /// Parses `address` or `address/prefix`; nil when it is neither.
    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = parts.first.flatMap(IPAddress.init) else { return nil }
        let width = address.isIPv4 ? 32 : 128
        var prefix = width
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...width).contains(given) else { return nil }
            prefix = given
        }
        bits = prefix + (128 - width)
        base = Self.masked(address, bits)
    }

    func contains(_ address: IPAddress) -> Bool { Self.masked(address, bits) == base }

    static func masked(_ address: IPAddress, _ bits: Int) -> IPAddress {
        let highMask: UInt64 = bits >= 64 ? .max : (bits == 0 ? 0 : .max << UInt64(64 - bits))
        let lowMask: UInt64 = bits <= 64 ? 0 : (bits >= 128 ? .max : .max << UInt64(128 - bits))
        return IPAddress(high: address.high & highMask, low: address.low & lowMask)
    }
}

extension [IPNetwork] {
    /// Whether any network holds `address`.
    func contains(_ address: IPAddress) -> Bool { contains { $0.contains(address) } }
}
