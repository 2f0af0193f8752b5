/// Size limits the request parser enforces; each breach is answered with its own status.
public struct HTTPParserLimits: Sendable, Equatable {
    /// Longest request line (method, target, version) → 414.
    public var maxRequestLineBytes = 8 * 1024
    /// Longest header block, request line included → 431.
    public var maxHeaderBytes = 32 * 1024
    /// Most header fields → 431.
    public var maxHeaderCount = 100
    /// Largest request body (declared or, when chunked, received) → 413 without reading the rest.
    public var maxBodyBytes = 1024 * 1024

    /// The defaults: 8 KiB line, 32 KiB head, 100 fields, 1 MiB body.
    public init() {}
}
