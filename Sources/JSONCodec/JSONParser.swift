/// A strict RFC 8259 parser from UTF-8 bytes to `JSONValue`, with caller-set limits.
///
/// Strict means: no trailing commas, comments, `NaN`/`Infinity`, leading zeros, raw control
/// characters, invalid UTF-8, unpaired surrogates or byte-order mark; an object naming a member twice
/// is an error. Integers that fit `Int64` (or `UInt64`) stay exact; longer integers become `Double`
/// (as in JavaScript); a number beyond `Double`'s range (`1e400`) is an error; `-0` is `.double(-0.0)`.
///
/// ```swift
/// let value = try JSONParser(maxDepth: 32).parse(body)
/// ```
public struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted (the top-level container is depth 1).
    public var maxDepth: Int
    /// The longest document accepted, in bytes.
    public var maxBytes: Int

    /// A parser with these limits.
    public init(maxDepth: Int = 64, maxBytes: Int = 1 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    /// Parses exactly one JSON document (surrounding whitespace allowed).
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        // Checked before any copy of a non-contiguous input.
        try checkSize(bytes.count)
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try parse(buffer: buffer) }
        }
        if let contiguous { return try contiguous.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) in try parse(buffer: buffer) }
        }.get()
    }

    func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var reader = JSONReader(bytes: buffer, maxDepth: maxDepth)
        return try reader.readDocument()
    }

    func checkSize(_ count: Int) throws(JSONParseError) {
        guard count > maxBytes else { return }
        throw JSONParseError(
            offset: maxBytes, reason: .inputTooLarge,
            message: "document of \(count) bytes exceeds the limit of \(maxBytes) bytes")
    }
}
