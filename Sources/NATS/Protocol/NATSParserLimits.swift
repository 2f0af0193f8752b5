/// Size limits the server-output parser enforces; a breach closes the connection.
public struct NATSParserLimits: Sendable, Equatable {
    /// Longest control line (`INFO`, `MSG`, `-ERR` …) without its CRLF. `INFO` lines of large
    /// clusters list every node's client URL, so this is larger than the server's own 4 KiB limit.
    public var maxControlLineBytes = 64 * 1024
    /// Largest message (headers and payload together); the connection sets it from `INFO`'s `max_payload`.
    public var maxPayloadBytes = 1024 * 1024

    /// The defaults: 64 KiB control lines, 1 MiB messages (the server's default `max_payload`).
    public init() {}

    /// Limits with the given sizes.
    public init(maxControlLineBytes: Int, maxPayloadBytes: Int) {
        self.maxControlLineBytes = maxControlLineBytes
        self.maxPayloadBytes = maxPayloadBytes
    }
}
