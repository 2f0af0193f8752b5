#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 address as 128 bits (IPv4 as its IPv4-mapped IPv6 form, `::ffff:a.b.c.d`), cheap
/// to hash and compare: connections are counted per client address with it.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The first and last 64 bits, in network order read as big-endian numbers.
    public var high: UInt64
    public var low: UInt64

    /// The address with these 128 bits.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The address of a numeric IPv4 or IPv6 string (`"10.0.0.1"`, `"::1"`, `"[::1]"`), or nil.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        // Dotted IPv4 read straight from the bytes: the rate limits parse an address per request, where
        // copying to a C string for inet_pton cost more than the rest of the check.
        if let v4 = text.withUTF8({ Self.parseIPv4($0) }) {
            self.init(ipv4: v4)
            return
        }
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(ipv4: UInt32(bigEndian: v4.s_addr))
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            self.init(ipv6: v6)
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

    init(ipv4: UInt32) {
        high = 0
        low = 0xFFFF_0000_0000 | UInt64(ipv4)
    }

    init(ipv6 address: in6_addr) {
        var address = address
        (high, low) = withUnsafeBytes(of: &address) { bytes in
            (
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).bigEndian,
                bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian
            )
        }
    }

    /// The address of a kernel socket address, or nil for other families.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            }
            self.init(ipv4: UInt32(bigEndian: address.s_addr))
        case AF_INET6:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            }
            self.init(ipv6: address)
        default:
            return nil
        }
    }

    /// Whether this is an IPv4 address (in its mapped form).
    public var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// `10.0.0.1` or `::1`.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if isIPv4 {
            var address = in_addr(s_addr: UInt32(truncatingIfNeeded: low).bigEndian)
            inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
        } else {
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { bytes in
                bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses, `10.0.0.0/8` or `fd00::/8` (a lone address is a block of one).
///
/// ```swift
/// let loopback = IPAddressRange("127.0.0.0/8")!
/// loopback.contains(IPAddress("127.0.0.2")!)  // true
/// ```
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the block.
    public let address: IPAddress
    /// How many leading bits every address of the block shares (counted in its own family).
    public let prefixLength: Int

    /// Parses `address[/prefix]`; nil when it is not a numeric address or the prefix is out of range.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.isIPv4 ? 32 : 128
        var prefixLength = bits
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bits).contains(value) else { return nil }
            prefixLength = value
        }
        self.prefixLength = prefixLength
        // Counted over all 128 bits: an IPv4 block keeps its 96-bit mapped prefix.
        let (high, low) = Self.mask(prefixLength + (address.isIPv4 ? 96 : 0))
        var masked = address
        masked.high &= high
        masked.low &= low
        self.address = masked
    }

    /// Whether `address` lies in the block.
    public func contains(_ address: IPAddress) -> Bool {
        let (high, low) = Self.mask(prefixLength + (self.address.isIPv4 ? 96 : 0))
        return address.high & high == self.address.high && address.low & low == self.address.low
    }

    /// `127.0.0.0/8`.
    public var description: String { "\(address)/\(prefixLength)" }

    /// The loopback blocks, `127.0.0.0/8` and `::1`.
    public static let loopback: [IPAddressRange] = [IPAddressRange("127.0.0.0/8")!, IPAddressRange("::1")!]

    /// The two halves of a mask of `bits` leading ones out of 128.
    private static func mask(_ bits: Int) -> (UInt64, UInt64) {
        let high: UInt64 = bits >= 64 ? .max : (bits == 0 ? 0 : .max << (64 - bits))
        let low: UInt64 = bits <= 64 ? 0 : (bits == 128 ? .max : .max << (128 - bits))
        return (high, low)
    }
}

extension [IPAddressRange] {
    /// Whether any block holds `address`.
    public func contains(_ address: IPAddress) -> Bool { contains { $0.contains(address) } }
}
