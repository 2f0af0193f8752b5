import Logs

/// How a ``NATSConnection`` connects: servers, credentials, timeouts, reconnect backoff, buffers.
///
/// Credentials come from the server URLs (`nats://user:pass@host`, `nats://token@host`) or from
/// ``user``/``password``/``token``, which, when set, apply to every server and win over the URLs.
/// TLS is not supported: a server that requires it is refused with ``NATSError/tlsRequired(server:)``.
///
/// ```swift
/// var options = try NATSOptions(servers: "nats://10.0.0.1:4222,nats://10.0.0.2:4222")
/// options.token = environment["NATS_TOKEN"]
/// options.name = "reactor-server@host-1"
/// ```
public struct NATSOptions: Sendable {
    /// The configured servers, tried in order (servers learned from `INFO` are tried after them).
    public var servers: [NATSServerAddress]
    /// A user name for every server (wins over URL credentials).
    public var user: String?
    /// The password that goes with ``user``.
    public var password: String?
    /// A token for every server (wins over URL credentials).
    public var token: String?
    /// The client name the server shows in its monitoring.
    public var name = "reactor-server"
    /// How long one attempt to reach one server may take (TCP connect, `INFO`, `CONNECT`, first `PONG`).
    public var connectTimeout: Duration = .seconds(2)
    /// The reply timeout of requests that do not give their own.
    public var requestTimeout: Duration = .seconds(5)
    /// The pause after the first pass over all servers failed; it doubles per failed pass, with jitter.
    public var reconnectWait: Duration = .milliseconds(50)
    /// The longest pause between passes.
    public var maxReconnectWait: Duration = .seconds(2)
    /// Failed passes over all servers after which the connection gives up and closes (nil: never).
    public var maxReconnectAttempts: Int?
    /// How often an idle connection sends `PING`.
    public var pingInterval: Duration = .seconds(5)
    /// Unanswered `PING`s after which the server is considered gone (e.g. paused) and left.
    public var maxPingsOutstanding = 2
    /// Bytes waiting to be written beyond which publishes fail with ``NATSError/outboundBufferFull(limit:)``.
    public var maxOutboundBytes = 64 * 1024 * 1024
    /// The longest control line accepted from the server.
    public var maxControlLineBytes = 64 * 1024
    /// Whether to add the cluster's other servers (`connect_urls` in `INFO`) to the reconnect list.
    public var discoverServers = true
    /// Where connection events (connected, lost, reconnect attempts) are logged; never credentials.
    public var logger: Logger = .disabled

    /// Options for `servers`.
    public init(servers: [NATSServerAddress]) {
        self.servers = servers
    }

    /// Options for a comma-separated list of `nats://` URLs.
    public init(servers: String) throws(NATSError) {
        self.servers = try NATSServerAddress.list(servers)
    }

    /// The credentials to present to `server`: explicit options first, then the URL's.
    func credentials(for server: NATSServerAddress) -> (user: String?, password: String?, token: String?) {
        if user != nil || token != nil { return (user, password, token) }
        return (server.user, server.password, server.token)
    }
}
