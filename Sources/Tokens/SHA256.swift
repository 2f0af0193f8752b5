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
            withUnsafeBytes(of: byte) { update($0) }
        }
    }

    /// Adds the bytes of `buffer` to the message.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard !buffer.isEmpty else { return }
        totalByteCount &+= UInt64(buffer.count)
        var rest = buffer[...]
        if pendingCount > 0 {
            let taken = min(Self.blockByteCount - pendingCount, rest.count)
            appendPending(UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
            rest = rest.dropFirst(taken)
            guard pendingCount == Self.blockByteCount else { return }
            compressPending()
        }
        let whole = rest.count - rest.count % Self.blockByteCount
        if whole > 0 {
            Self.compress(&state, blocks: UnsafeRawBufferPointer(rebasing: rest.prefix(whole)))
            rest = rest.dropFirst(whole)
        }
        appendPending(UnsafeRawBufferPointer(rebasing: rest))
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns its 32-byte digest.
    public consuming func finalize() -> [UInt8] {
        // The pending bytes, the 0x80 marker, zeros and the 64-bit length fill one block, or two when the
        // length does not fit after the marker.
        let blocks = pendingCount < Self.blockByteCount - 8 ? 1 : 2
        let bitLength = totalByteCount &<< 3
        var state = state
        withUnsafeTemporaryAllocation(byteCount: 2 * Self.blockByteCount, alignment: 8) { padded in
            padded.initializeMemory(as: UInt8.self, repeating: 0)
            pending.span.withUnsafeBufferPointer { bytes in
                padded.copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes).prefix(pendingCount)))
            }
            padded[pendingCount] = 0x80
            padded.storeBytes(of: bitLength.bigEndian, toByteOffset: blocks * Self.blockByteCount - 8, as: UInt64.self)
            Self.compress(&state, blocks: UnsafeRawBufferPointer(rebasing: padded.prefix(blocks * Self.blockByteCount)))
        }
        return [UInt8](unsafeUninitializedCapacity: Self.byteCount) { digest, count in
            for word in 0..<8 {
                UnsafeMutableRawBufferPointer(digest).storeBytes(
                    of: state[word].bigEndian, toByteOffset: 4 * word, as: UInt32.self)
            }
            count = Self.byteCount
        }
    }

    /// Copies `bytes` after the pending ones; the caller makes sure they fit in the block.
    private mutating func appendPending(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        let start = pendingCount
        var span = pending.mutableSpan
        span.withUnsafeMutableBytes { block in
            UnsafeMutableRawBufferPointer(rebasing: block[start..<(start + bytes.count)]).copyMemory(from: bytes)
        }
        pendingCount += bytes.count
    }

    /// Compresses the full pending block and empties it.
    private mutating func compressPending() {
        pending.span.withUnsafeBufferPointer { bytes in
            Self.compress(&state, blocks: UnsafeRawBufferPointer(bytes))
        }
        pendingCount = 0
    }
}
