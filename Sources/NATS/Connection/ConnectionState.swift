#if canImport(Glibc)
    import Glibc
#endif

/// A reply someone is waiting for.
struct PendingReply: Sendable {
    /// How the reply is handed over.
    enum Handler: Sendable {
        /// One reply ends the request.
        case single(@Sendable (Result<NATSMessage, NATSError>) -> Void)
        /// Replies keep coming until the handler returns false (a consumer fetch), or the deadline.
        case stream(@Sendable (Result<NATSMessage, NATSError>) -> Bool)
    }

    /// The subject the request went to, for error messages.
    var subject: String
    /// The connection generation the request was queued for (see ``ConnectionState/epoch``).
    var epoch: UInt64
    /// The timeout, for error messages.
    var timeout: Duration
    var handler: Handler
    /// The request's own subscription, for multi-message replies (see ``NATSConnection/sendRequest``).
    var sid: UInt64?

    /// Ends the request with `error`.
    func fail(_ error: NATSError) {
        switch handler {
        case .single(let completion): completion(.failure(error))
        case .stream(let handler): _ = handler(.failure(error))
        }
    }
}

/// A `PING` whose `PONG` someone waits for (or a keep-alive nobody waits for).
struct PendingPing: Sendable {
    var id: UInt64
    var epoch: UInt64
    var timeout: Duration
    /// Nil for a keep-alive, or once a flush timed out (the entry stays to keep PONGs matched in order).
    var completion: (@Sendable (Result<Void, NATSError>) -> Void)?
}

/// A subscription, kept to re-subscribe after a reconnect.
struct SubscriptionRecord: Sendable {
    var subject: String
    var queue: String?
    var handler: @Sendable (NATSMessage) -> Void
}

/// Everything the callers' threads and the connection's thread share, behind one lock.
///
/// `epoch` numbers connection generations: it increments each time an established connection
/// ends. Work queued while generation N is current is written to connection N (or, when queued
/// while disconnected, to the next one); when connection N ends, work of generation N fails with
/// `connectionLost`, because it may or may not have reached the server.
struct ConnectionState: Sendable {
    var status: NATSConnection.Status = .idle
    var started = false
    var closing = false
    var epoch: UInt64 = 1
    /// Encoded commands not yet taken by the connection's thread.
    var outbound: [UInt8] = []
    /// Whether the connection's thread has been signalled since it last took `outbound`.
    var wakePending = false
    var maxPayload = 1024 * 1024
    /// The server currently connected to.
    var server: NATSServerAddress?
    var info = ServerInfo()
    /// Configured servers first, then those learned from `INFO`.
    var servers: [NATSServerAddress]
    /// Each server's last failure in the latest failed pass, for `cannotConnect`.
    var lastAttempts: [String] = []
    var subscriptions: [UInt64: SubscriptionRecord] = [:]
    var nextSID: UInt64 = 2
    var replies: [UInt64: PendingReply] = [:]
    var nextToken: UInt64 = 1
    var pings: [PendingPing] = []
    var nextPingID: UInt64 = 1
    var deadlines = DeadlineQueue()
    var connectWaiters: [UInt64: @Sendable (Result<Void, NATSError>) -> Void] = [:]
    var nextWaiterID: UInt64 = 1
    var observers: [@Sendable (NATSConnection.Status) -> Void] = []
    /// The `server_name` to connect to when it is among the servers (``NATSConnection/prefer(serverNamed:)``).
    var preferredServer: String?
    /// Whether the connection's thread should leave the current server for the preferred one.
    var moveRequested = false
    var driverThread: pthread_t?

    init(servers: [NATSServerAddress]) {
        self.servers = servers
    }

    /// The server to name in errors: the current one, or a note that there is none.
    var serverName: String { server?.description ?? "(not connected)" }

    /// Removes request `token` (and its own subscription, if it has one); returns it, and whether
    /// the connection's thread must be woken for the `UNSUB`.
    mutating func removeReply(_ token: UInt64) -> (reply: PendingReply?, wake: Bool) {
        guard let reply = replies.removeValue(forKey: token) else { return (nil, false) }
        guard let sid = reply.sid, subscriptions.removeValue(forKey: sid) != nil, case .connected = status else {
            return (reply, false)
        }
        return (reply, (try? enqueue(limit: .max) { ClientCommand.unsubscribe(sid: sid, into: &$0) }) ?? false)
    }

    /// Appends a command to `outbound`; returns whether the connection's thread must be woken.
    mutating func enqueue(limit: Int, _ encode: (inout [UInt8]) -> Void) throws(NATSError) -> Bool {
        guard !closing else { throw NATSError.closed }
        guard outbound.count < limit else { throw NATSError.outboundBufferFull(limit: limit) }
        encode(&outbound)
        guard !wakePending else { return false }
        wakePending = true
        return true
    }
}
