import Dispatch
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a NATS server (or cluster), with request/reply, subscriptions and reconnects.
/// Plain TCP only: TLS is not supported, and a server that requires it is refused with
/// ``NATSError/tlsRequired(server:)``.
///
/// **Threading.** Each connection owns one thread. It does all socket I/O (`poll` on the socket and
/// an eventfd), and it runs every callback: message handlers, request completions, status
/// observers. Calls from other threads never touch the socket: they encode their command into a
/// shared buffer under a short lock and wake the thread, so a caller never waits on the network
/// (callers on an epoll loop pass completion handlers; others may `await`). A callback may
/// publish, request or subscribe freely (nothing is locked while it runs), but must not block: the
/// connection reads nothing while a callback runs.
///
/// **Reconnects.** When the connection breaks, the thread tries the configured servers in order,
/// then the cluster's other servers learned from `INFO`, with jittered exponential backoff
/// between passes, and re-subscribes everything on the new connection. Requests and flushes that
/// were queued for the broken connection fail with ``NATSError/connectionLost(server:reason:)``
/// (they may or may not have reached the server; nothing is retried behind the caller's back).
/// Work queued while disconnected is sent once a connection is back, and requests still time out
/// meanwhile. Plain publishes queued for the broken connection are lost (NATS core is at most once).
///
/// ```swift
/// let connection = NATSConnection(options: try NATSOptions(servers: "nats://127.0.0.1:4222"))
/// try await connection.connect(timeout: .seconds(5))
/// let subscription = try connection.subscribe(to: "greet") { message in
///     if let reply = message.replyTo { try? connection.publish(reply, payload: Array("hi".utf8)) }
/// }
/// let answer = try await connection.request("greet", payload: [])
/// subscription.unsubscribe()
/// connection.close()
/// ```
public final class NATSConnection: Sendable {
    /// Where the connection stands; observers see every change, on the connection's thread.
    public enum Status: Sendable, Equatable, CustomStringConvertible {
        /// Created; ``start()`` or ``connect(timeout:)`` not called yet.
        case idle
        /// Making its first connection.
        case connecting
        /// Connected to this server (`nats://host:port`).
        case connected(server: String)
        /// The connection broke; trying the servers again.
        case reconnecting
        /// Closed for good.
        case closed

        /// `connected to nats://127.0.0.1:4222`, `reconnecting`, …
        public var description: String {
            switch self {
            case .idle: "idle"
            case .connecting: "connecting"
            case .connected(let server): "connected to \(server)"
            case .reconnecting: "reconnecting"
            case .closed: "closed"
            }
        }
    }

    /// The options it was made with.
    public let options: NATSOptions
    let state: Mutex<ConnectionState>
    /// Wakes the connection's thread (new output, close, a new deadline).
    let wakeFD: Int32
    /// `_INBOX.<random>.`: replies to this connection's requests arrive under it, one token each.
    let inboxPrefix: String
    /// The connection's thread (`pthread_self()`), 0 before it starts: work it queues itself needs no wake-up.
    let driverThreadID = Atomic<UInt>(0)
    /// Signalled when the connection's thread has finished.
    let finished = DispatchSemaphore(value: 0)
    /// Why the connection was closed from the start, if it could not be set up.
    let setupFailure: NATSError?

    /// The requests sent so far, by kind (publishes awaiting an ack, key-value writes, API calls).
    public let sentRequests = SentRequests()

    /// The subscription id of the shared reply inbox.
    static let inboxSID: UInt64 = 1

    /// A connection that will use `options`; nothing happens until ``start()`` or ``connect(timeout:)``.
    public init(options: NATSOptions) {
        self.options = options
        var initial = ConnectionState(servers: options.servers)
        do {
            wakeFD = try Posix.eventfd()
            setupFailure = nil
        } catch {
            // Out of descriptors: a connection that is closed from the start, which says why.
            wakeFD = -1
            setupFailure = .systemCall("\(error)")
            initial.closing = true
            initial.status = .closed
        }
        state = Mutex(initial)
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        inboxPrefix =
            "_INBOX."
            + String(
                decoding: (0..<22).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }, as: UTF8.self)
            + "."
    }

    deinit {
        if wakeFD >= 0 { Posix.close(wakeFD) }
    }

    /// The current status.
    public var status: Status { state.withLock { $0.status } }

    /// What the connected server said about itself (empty before the first connection).
    public var serverInfo: ServerInfo { state.withLock { $0.info } }

    /// The servers the connection may try: the configured ones, then those learned from `INFO`.
    public var knownServers: [NATSServerAddress] { state.withLock { $0.servers } }

    /// Prefers the server whose `INFO` names it `name` (JetStream's `server_name`), e.g. a stream's leader, so
    /// requests to it do not cross a cluster route: from now on each connection attempt looks for it among the known
    /// servers first (any other will do if none is it). When the preference changes while the connection is on
    /// another server, it moves at once: requests in flight fail with ``NATSError/connectionLost(server:reason:)``,
    /// as on any reconnect. A preference already set does not move the connection again. Nil: no preference.
    public func prefer(serverNamed name: String?) {
        let wake = state.withLock { state -> Bool in
            guard state.preferredServer != name else { return false }
            state.preferredServer = name
            guard let name, case .connected = state.status, state.info.serverName != name else { return false }
            state.moveRequested = true
            return true
        }
        wakeDriver(if: wake)
    }

    /// The preferred server's name (``prefer(serverNamed:)``), if any.
    public var preferredServer: String? { state.withLock { $0.preferredServer } }

    /// Calls `observer` (on the connection's thread) at every status change from now on.
    public func observeStatus(_ observer: @escaping @Sendable (Status) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Starts the connection's thread, which connects in the background and keeps reconnecting
    /// (see ``NATSOptions/maxReconnectAttempts``). Work queued before the first connection waits for it.
    public func start() {
        let starting = state.withLock { state -> Bool in
            guard !state.started, !state.closing else { return false }
            state.started = true
            state.status = .connecting
            return true
        }
        guard starting else { return }
        if let failure = ConnectionDriver(connection: self).startThread() {
            state.withLock {
                $0.closing = true
                $0.status = .closed
            }
            failEverything(with: failure)
            finished.signal()
        }
    }

    /// Starts the connection if needed and calls `completion` (on the connection's thread) once it
    /// is connected, or with the error that stops it: refused credentials, a server that requires
    /// TLS, or no server reachable within `timeout` (``NATSError/cannotConnect(attempts:)``, naming
    /// each server's failure). On failure the connection is closed.
    public func connect(timeout: Duration, completion: @escaping @Sendable (Result<Void, NATSError>) -> Void) {
        let immediate = state.withLock { state -> Result<Void, NATSError>? in
            if case .connected = state.status { return .success(()) }
            if state.closing { return .failure(setupFailure ?? .closed) }
            let id = state.nextWaiterID
            state.nextWaiterID += 1
            state.connectWaiters[id] = completion
            state.deadlines.insert(.now + timeout, .connect(id))
            return nil
        }
        if let immediate {
            completion(immediate)
            return
        }
        start()
        wakeDriver(if: true)
    }

    /// Starts the connection if needed and returns once it is connected; see ``connect(timeout:completion:)``.
    public func connect(timeout: Duration) async throws(NATSError) {
        let result = await withCheckedContinuation { continuation in
            connect(timeout: timeout) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Closes the connection: pending requests, flushes and connect waiters fail with
    /// ``NATSError/closed``, the socket is closed and the thread ends. Returns once the thread has
    /// ended, unless called on that thread (from a callback), where it returns at once.
    public func close() {
        let (started, onDriver) = state.withLock { state -> (Bool, Bool) in
            state.closing = true
            let onDriver = state.driverThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            if !state.started { state.status = .closed }
            return (state.started, onDriver)
        }
        guard started else {
            failEverything(with: .closed)
            return
        }
        wakeDriver(if: true)
        if !onDriver {
            finished.wait()
            finished.signal()  // later close() calls return at once too
        }
    }

    /// Fails every pending request, flush and connect waiter with `error` (the connection is closing),
    /// and drops subscriptions and observers: their closures often capture the connection, and
    /// holding them would keep a closed connection alive.
    func failEverything(with error: NATSError) {
        let (replies, pings, waiters) = state.withLock { state in
            let taken = (
                Array(state.replies.values), state.pings.compactMap(\.completion), Array(state.connectWaiters.values)
            )
            state.subscriptions.removeAll()
            state.observers.removeAll()
            state.replies.removeAll()
            state.pings.removeAll()
            state.connectWaiters.removeAll()
            state.deadlines.removeAll()
            state.outbound.removeAll()
            return taken
        }
        for reply in replies { reply.fail(error) }
        for ping in pings { ping(.failure(error)) }
        for waiter in waiters { waiter(.failure(error)) }
    }

    /// Sets the status and tells the observers (called on the connection's thread).
    func setStatus(_ status: Status) {
        let observers = state.withLock { state -> [@Sendable (Status) -> Void] in
            guard state.status != status else { return [] }
            state.status = status
            return state.observers
        }
        for observer in observers { observer(status) }
    }

    /// Wakes the connection's thread if `needed`, unless this is that thread: it queues work only from callbacks,
    /// and takes the queue before it next waits (an `eventfd` write and a wasted `poll` round saved per publish an
    /// acknowledgement's callback makes).
    @inline(__always)
    func wakeDriver(if needed: Bool) {
        guard needed, wakeFD >= 0, driverThreadID.load(ordering: .relaxed) != UInt(pthread_self()) else {
            return
        }
        Posix.signal(eventfd: wakeFD)
    }
}
