import JSONCodec

/// What a server says about itself in `INFO` (the fields this client uses).
public struct ServerInfo: Sendable, Equatable {
    /// The server's unique id.
    public var serverID = ""
    /// Its configured name (`server_name`), or its id when none was configured.
    public var serverName = ""
    /// The server's version, e.g. `2.9.10`.
    public var version = ""
    /// The largest message it accepts, headers included.
    public var maxPayload = 1024 * 1024
    /// Whether it understands `HPUB`/`HMSG`.
    public var supportsHeaders = false
    /// Whether it needs credentials.
    public var authRequired = false
    /// Whether it needs TLS (which this client does not speak).
    public var tlsRequired = false
    /// Whether JetStream is enabled on it.
    public var jetStream = false
    /// Client URLs (`host:port`) of the other servers in its cluster.
    public var connectURLs: [String] = []
    /// Whether it is in lame-duck mode (about to shut down; clients should move).
    public var lameDuckMode = false

    /// Empty information, for a server not yet heard from.
    public init() {}

    /// The fields of an `INFO` JSON object; nil when it is not a JSON object.
    public init?(json: some Collection<UInt8>) {
        guard let value = try? JSONParser(maxDepth: 16, maxBytes: 1 << 20).parse(json), case .object = value else {
            return nil
        }
        serverID = value["server_id"]?.stringValue ?? ""
        serverName = value["server_name"]?.stringValue ?? serverID
        version = value["version"]?.stringValue ?? ""
        if let max = value["max_payload"]?.numberValue?.int64Value, max > 0, max <= Int64(Int32.max) {
            maxPayload = Int(max)
        }
        supportsHeaders = value["headers"]?.boolValue ?? false
        authRequired = value["auth_required"]?.boolValue ?? false
        tlsRequired = value["tls_required"]?.boolValue ?? false
        jetStream = value["jetstream"]?.boolValue ?? false
        connectURLs = value["connect_urls"]?.arrayValue?.compactMap(\.stringValue) ?? []
        lameDuckMode = value["ldm"]?.boolValue ?? false
    }
}
