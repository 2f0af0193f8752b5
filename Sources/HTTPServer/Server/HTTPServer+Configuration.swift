extension HTTPServer {
    /// Everything tunable about the server; every field has a default, so `Configuration()` works.
    public struct Configuration: Sendable {
        /// Numeric address to listen on.
        public var host = "127.0.0.1"
        /// Port to listen on; 0 picks a free one (see `start()`'s result).
        public var port = 8080
        /// Number of event loops; nil means one per CPU in this process's affinity mask.
        public var loopCount: Int? = nil
        /// Pending-connection queue length per listener.
        public var backlog = 1024
        /// Most connections served at once, across all loops; more are answered `503` and closed.
        /// nil derives it from the open-file limit (`RLIMIT_NOFILE`) at start, keeping headroom for
        /// files, outgoing connections and the `503` answers themselves (see ``HTTPServer/start()``).
        public var maxConnections: Int? = nil
        /// Most connections from one client address; more are answered `503` and closed. nil: no limit.
        public var maxConnectionsPerAddress: Int? = nil
        /// Client addresses `maxConnectionsPerAddress` does not apply to: loopback by default (a proxy
        /// or load tool on the same host); add a proxy's address when one sits in front.
        public var connectionLimitExemptions: [IPAddressRange] = IPAddressRange.loopback
        /// Request size limits.
        public var limits = HTTPParserLimits()
        /// How long a client may take to send a complete request head (slowloris defence).
        public var requestHeadTimeout: Duration = .seconds(10)
        /// How long a request body may stall between two reads.
        public var bodyTimeout: Duration = .seconds(30)
        /// How long a keep-alive connection may sit between requests.
        public var idleTimeout: Duration = .seconds(60)
        /// How long a peer may go without reading any of a finite response it is owed.
        public var writeTimeout: Duration = .seconds(30)
        /// How long the responder may take to answer before the client gets a 503.
        public var responseTimeout: Duration = .seconds(60)
        /// How long a graceful shutdown waits for in-flight work before closing everything.
        public var shutdownTimeout: Duration = .seconds(10)
        /// Bytes queued per event stream beyond which `send` reports `.overflow`.
        public var eventStreamBufferLimit = 256 * 1024
        /// Quiet time after which an event stream gets a `: keep-alive` comment.
        public var eventStreamKeepAliveInterval: Duration = .seconds(15)
        /// Holds answers and events back until what they show is durable (a store's watermark); nil
        /// writes everything at once. Asked right before each write: keep `isDurable` cheap.
        public var outputBarrier: (any OutputBarrier)? = nil

        /// The defaults documented on each field.
        public init() {}
    }
}
