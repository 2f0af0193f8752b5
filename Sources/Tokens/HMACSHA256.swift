/// HMAC with SHA-256 (RFC 2104, test vectors in RFC 4231), streaming or one-shot.
///
/// A value holds the hash states after the padded key, so one prepared value copied per message skips
/// the two key blocks (the JWT verifier keeps one). It never prints or reflects its key-derived state.
///
/// ```swift
/// let tag = HMACSHA256.authenticationCode(for: Array("message".utf8), key: secret)   // 32 bytes
///
/// let prepared = HMACSHA256(key: secret)
/// var mac = prepared            // a cheap copy per message
/// mac.update(Array("message".utf8))
/// mac.finalize() == tag         // true
/// ```
public struct HMACSHA256: Sendable {
    /// The length of an authentication code, in bytes.
    public static let byteCount = SHA256.byteCount

    /// SHA-256 after absorbing `key ⊕ ipad`; the message goes here.
    private var inner = SHA256()
    /// SHA-256 after absorbing `key ⊕ opad`; the inner digest goes here.
    private var outer = SHA256()

    /// Prepares a MAC under `key`; a key longer than a block is hashed first, as RFC 2104 §2 says.
    public init(key: some Collection<UInt8>) {
        var block = InlineArray<64, UInt8>(repeating: 0)
        if key.count > SHA256.blockByteCount {
            for (index, byte) in SHA256.hash(key).enumerated() { block[index] = byte }
        } else {
            for (index, byte) in key.enumerated() { block[index] = byte }
        }
        var innerPad = InlineArray<64, UInt8>(repeating: 0)
        var outerPad = InlineArray<64, UInt8>(repeating: 0)
        for index in 0..<SHA256.blockByteCount {
            innerPad[index] = block[index] ^ 0x36
            outerPad[index] = block[index] ^ 0x5c
        }
        innerPad.span.withUnsafeBufferPointer { inner.update(UnsafeRawBufferPointer($0)) }
        outerPad.span.withUnsafeBufferPointer { outer.update(UnsafeRawBufferPointer($0)) }
    }

    /// The authentication code of `message` under `key`, in one call.
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        var mac = HMACSHA256(key: key)
        mac.update(message)
        return mac.finalize()
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some Collection<UInt8>) { inner.update(bytes) }

    /// Adds the bytes of `buffer` to the message.
    public mutating func update(_ buffer: UnsafeRawBufferPointer) { inner.update(buffer) }

    /// The 32-byte authentication code of the message so far.
    public consuming func finalize() -> [UInt8] {
        var outer = outer
        outer.update(inner.finalize())
        return outer.finalize()
    }
}

extension HMACSHA256: CustomStringConvertible, CustomReflectable {
    /// A fixed text: the state is as good as the key for forging codes, so it is never shown.
    public var description: String { "HMACSHA256(key redacted)" }
    /// No children, so `dump` and debuggers show nothing key-derived.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
