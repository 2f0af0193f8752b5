/// SHA-256 (FIPS 180-4 §6.2), streaming or one-shot, with no allocation beyond the digest it returns.
///
/// ```swift
/// let digest = SHA256.hash(Array("abc".utf8))   // ba7816bf…f20015ad, 32 bytes
///
/// var hasher = SHA256()
/// hasher.update(Array("ab".utf8))
/// hasher.update(Array("c".utf8))
/// hasher.finalize() == digest                    // true
/// ```
public struct SHA256: Sendable {
    /// The length of a digest, in bytes.
    public static let byteCount = 32
    /// The length of one compression block, in bytes (HMAC pads its key to this).
    public static let blockByteCount = 64

    /// The eight working words H0…H7 (FIPS 180-4 §5.3.3 gives their first values).
    var state: InlineArray<8, UInt32> = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    /// The bytes of a block not yet complete; only the first `pendingCount` are meaningful.
    var pending = InlineArray<64, UInt8>(repeating: 0)
    var pendingCount = 0
    /// Every byte given to `update` so far (the message length goes into the padding).
    var totalByteCount: UInt64 = 0

    /// A hasher that has seen no bytes yet.
    public init() {}

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        guard done == nil else { return }
        // A non-contiguous collection goes through the pending block a byte at a time: slower, never allocating.
        for byte in bytes {
            pending[pendingCount] = byte
            pendingCount += 1
            totalByteCount &+= 1
            if pendingCount == Self.blockByteCount { compressPending() }
        }
    }

    /// Adds the bytes of `buffer` to the message.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard !buffer.isEmpty else { return }
        totalByteCount &+= UInt64(buffer.count)
        var rest = buffer[...]
        if pendingCount > 0 {
            let taken = min(Self.blockByteCount - pendingCount, rest.count)
            for offset in 0..<taken { pending[pendingCount + offset] = rest[rest.startIndex + offset] }
            pendingCount += taken
            rest = rest.dropFirst(taken)
            guard pendingCount == Self.blockByteCount else { return }
            compressPending()
        }
        let whole = rest.count - rest.count % Self.blockByteCount
        if whole > 0 {
            Self.compress(&state, blocks: UnsafeRawBufferPointer(rebasing: rest.prefix(whole)))
            rest = rest.dropFirst(whole)
        }
        for offset in 0..<rest.count { pending[offset] = rest[rest.startIndex + offset] }
        pendingCount = rest.count
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns its 32-byte digest.
    public consuming func finalize() -> [UInt8] {
        let bitLength = totalByteCount &<< 3
        pending[pendingCount] = 0x80
        pendingCount += 1
        // The 64-bit length must fit after the 0x80 marker; if it does not, pad out this block first.
        if pendingCount > Self.blockByteCount - 8 {
            for offset in pendingCount..<Self.blockByteCount { pending[offset] = 0 }
            compressPending()
        }
        for offset in pendingCount..<(Self.blockByteCount - 8) { pending[offset] = 0 }
        for index in 0..<8 { pending[Self.blockByteCount - 8 + index] = UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64(index))) }
        compressPending()
        var digest = [UInt8](repeating: 0, count: Self.byteCount)
        for word in 0..<8 {
            for index in 0..<4 { digest[4 * word + index] = UInt8(truncatingIfNeeded: state[word] >> (24 - 8 * UInt32(index))) }
        }
        return digest
    }

    /// Compresses the full pending block and empties it.
    private mutating func compressPending() {
        let block = pending
        block.span.withUnsafeBufferPointer { buffer in
            Self.compress(&state, blocks: UnsafeRawBufferPointer(buffer))
        }
        pendingCount = 0
    }
}
