/// Publishing, subscribing and flushing. Every call here returns at once: it queues the command
/// for the connection's thread, and throws only what is known at once (a closed connection, an
/// invalid subject, a message over `max_payload`, a full outbound buffer).
extension NATSConnection {
    /// Publishes `payload` (with `headers`, if any) to `subject`, at most once: if the connection
    /// breaks before the bytes are written, the message is lost.
    public func publish(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headers: NATSHeaders? = nil,
        replyTo: String? = nil
    ) throws(NATSError) {
        try validate(subject: subject)
        if let replyTo { try validate(subject: replyTo) }
        let headerBytes = try headers.map { headers throws(NATSError) in try headers.encoded() }
        let size = ClientCommand.messageSize(headers: headerBytes, payload: payload.count)
        let limit = options.maxOutboundBytes
        let wake = try state.withLock { state throws(NATSError) -> Bool in
            guard size <= state.maxPayload else {
                throw NATSError.payloadTooLarge(bytes: size, limit: state.maxPayload)
            }
            return try state.enqueue(limit: limit) {
                ClientCommand.publish(
                    subject: subject, replyTo: replyTo, headers: headerBytes, payload: payload, into: &$0)
            }
        }
        wakeDriver(if: wake)
    }

    /// Subscribes to `subject` (wildcards allowed), optionally in a queue group; `handler` runs on the
    /// connection's thread for every message, until ``NATSSubscription/unsubscribe()``. The
    /// subscription is renewed on every reconnect.
    public func subscribe(to subject: String, queue: String? = nil, handler: @escaping @Sendable (NATSMessage) -> Void)
        throws(NATSError) -> NATSSubscription
    {
        try validate(subject: subject)
        if let queue { try validate(subject: queue) }
        let limit = options.maxOutboundBytes
        let (sid, wake) = try state.withLock { state throws(NATSError) -> (UInt64, Bool) in
            guard !state.closing else { throw NATSError.closed }
            let sid = state.nextSID
            state.nextSID += 1
            state.subscriptions[sid] = SubscriptionRecord(subject: subject, queue: queue, handler: handler)
            // While disconnected, the reconnect handshake subscribes everything in the table.
            guard case .connected = state.status else { return (sid, false) }
            return (
                sid,
                try state.enqueue(limit: limit) {
                    ClientCommand.subscribe(subject: subject, queue: queue, sid: sid, into: &$0)
                }
            )
        }
        wakeDriver(if: wake)
        return NATSSubscription(connection: self, sid: sid, subject: subject)
    }

    /// Subscribes to `subject` and delivers its messages as an async sequence (buffered without
    /// limit: for tests and low-rate subjects). Unsubscribe through the returned subscription.
    public func messages(on subject: String, queue: String? = nil) throws(NATSError) -> (
        NATSSubscription, AsyncStream<NATSMessage>
    ) {
        let (stream, continuation) = AsyncStream<NATSMessage>.makeStream()
        let subscription = try subscribe(to: subject, queue: queue) { continuation.yield($0) }
        return (subscription, stream)
    }

    /// Stops delivering to subscription `sid`.
    func unsubscribe(sid: UInt64) {
        let limit = options.maxOutboundBytes
        let wake = state.withLock { state -> Bool in
            guard state.subscriptions.removeValue(forKey: sid) != nil, case .connected = state.status else {
                return false
            }
            return (try? state.enqueue(limit: limit) { ClientCommand.unsubscribe(sid: sid, into: &$0) }) ?? false
        }
        wakeDriver(if: wake)
    }

    /// Sends a `PING` after everything queued so far and calls `completion` (on the connection's
    /// thread) when its `PONG` arrives, that is, once the server has processed everything before it.
    public func flush(timeout: Duration? = nil, completion: @escaping @Sendable (Result<Void, NATSError>) -> Void)
        throws(NATSError)
    {
        let wait = timeout ?? options.requestTimeout
        let wake = try state.withLock { state throws(NATSError) -> Bool in
            // Six bytes past the limit: a flush is how a caller waits for a full buffer to drain.
            let wake = try state.enqueue(limit: .max) { ClientCommand.ping(into: &$0) }
            let id = state.nextPingID
            state.nextPingID += 1
            state.pings.append(PendingPing(id: id, epoch: state.epoch, timeout: wait, completion: completion))
            state.deadlines.insert(.now + wait, .ping(id))
            return wake
        }
        wakeDriver(if: wake)
    }

    /// Returns once the server has processed everything queued before this call.
    public func flush(timeout: Duration? = nil) async throws(NATSError) {
        let result: Result<Void, NATSError> = await withCheckedContinuation { continuation in
            do throws(NATSError) {
                try flush(timeout: timeout) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        try result.get()
    }

    func validate(subject: String) throws(NATSError) {
        guard ClientCommand.isValidSubject(subject) else {
            throw NATSError.invalidArgument(
                "invalid NATS subject \"\(subject)\": it must be non-empty, without blanks or empty tokens")
        }
    }
}

/// A live subscription; ``unsubscribe()`` ends it.
public struct NATSSubscription: Sendable {
    let connection: NATSConnection
    /// The subscription id this connection gave it.
    public let sid: UInt64
    /// The subject (possibly with wildcards) it listens to.
    public let subject: String

    /// Stops deliveries; messages already being delivered may still arrive.
    public func unsubscribe() {
        connection.unsubscribe(sid: sid)
    }
}
