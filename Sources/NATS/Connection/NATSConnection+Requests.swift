import Synchronization

/// Request/reply over one shared inbox subscription (`_INBOX.<random>.*`, subscribed on every
/// connection): each request gets its own token, `_INBOX.<random>.<token>`, so any number can be
/// in flight at once, each with its own timeout.
extension NATSConnection {
    /// Publishes a request and calls `completion` once, on the connection's thread, with the first
    /// reply or the error: ``NATSError/noResponders(subject:server:)`` when nobody listens (status
    /// 503), ``NATSError/timedOut(subject:server:after:)``, ``NATSError/connectionLost(server:reason:)``.
    /// Throws (and never calls `completion`) when the request cannot be queued at all.
    public func request(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headers: NATSHeaders? = nil,
        timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void
    ) throws(NATSError) {
        _ = try sendRequest(subject, payload: payload, headers: headers, timeout: timeout, handler: .single(completion))
    }

    /// Publishes a request and returns its first reply; see ``request(_:payload:headers:timeout:completion:)``.
    /// Cancelling the task ends the wait with ``NATSError/cancelled`` (the request may still be served).
    public func request(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headers: NATSHeaders? = nil,
        timeout: Duration? = nil
    ) async throws(NATSError) -> NATSMessage {
        let token = Mutex<(UInt64?, cancelled: Bool)>((nil, false))
        let result: Result<NATSMessage, NATSError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                do throws(NATSError) {
                    let sent = try sendRequest(
                        subject, payload: payload, headers: headers, timeout: timeout,
                        handler: .single { continuation.resume(returning: $0) })
                    let cancelled = token.withLock { value in
                        value.0 = sent
                        return value.cancelled
                    }
                    if cancelled { cancelRequest(sent) }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            let sent = token.withLock { value in
                value.cancelled = true
                return value.0
            }
            if let sent { cancelRequest(sent) }
        }
        return try result.get()
    }

    /// Queues a request whose replies go to `handler`; returns its token.
    ///
    /// A single-reply request uses the shared inbox. A multi-message one (a consumer fetch) gets a
    /// subscription of its own on `_INBOX.<random>_S.<token>`: JetStream delivers those messages
    /// under their original subjects, so only the subscription id tells whose they are.
    func sendRequest(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headers: NATSHeaders?, timeout: Duration?,
        handler: PendingReply.Handler
    ) throws(NATSError) -> UInt64 {
        let headerBytes = try headers.map { headers throws(NATSError) in try headers.encoded() }
        return try sendRequest(subject, payload: payload, headerBytes: headerBytes, timeout: timeout, handler: handler)
    }

    /// Queues a request whose header block is already encoded (the JetStream publish path's); see above.
    func sendRequest(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headerBytes: [UInt8]?, timeout: Duration?,
        handler: PendingReply.Handler
    ) throws(NATSError) -> UInt64 {
        try validate(subject: subject)
        let size = ClientCommand.messageSize(headers: headerBytes, payload: payload.count)
        let wait = timeout ?? options.requestTimeout
        let limit = options.maxOutboundBytes
        let (token, wake) = try state.withLock { state throws(NATSError) -> (UInt64, Bool) in
            guard size <= state.maxPayload else {
                throw NATSError.payloadTooLarge(bytes: size, limit: state.maxPayload)
            }
            let token = state.nextToken
            var reply = PendingReply(subject: subject, epoch: state.epoch, timeout: wait, handler: handler)
            var replyTo = inboxPrefix + String(token)
            var subscribe: (sid: UInt64, subject: String)?
            if case .stream = handler {
                replyTo = streamInboxPrefix + String(token)
                subscribe = (state.nextSID, replyTo)
                reply.sid = state.nextSID
            }
            let connected = if case .connected = state.status { true } else { false }
            let wake = try state.enqueue(limit: limit) { buffer in
                // While disconnected, the reconnect handshake subscribes everything in the table.
                if let subscribe, connected {
                    ClientCommand.subscribe(subject: subscribe.subject, queue: nil, sid: subscribe.sid, into: &buffer)
                }
                ClientCommand.publish(
                    subject: subject, replyTo: replyTo, headers: headerBytes, payload: payload, into: &buffer)
            }
            if let subscribe {
                state.subscriptions[subscribe.sid] = SubscriptionRecord(subject: subscribe.subject, queue: nil) {
                    [self] message in
                    deliverStreamReply(message, token: token)
                }
                state.nextSID += 1
            }
            state.nextToken += 1
            state.replies[token] = reply
            state.deadlines.insert(.now + wait, .reply(token))
            return (token, wake)
        }
        sentRequests.count(subject)
        wakeDriver(if: wake)
        return token
    }

    /// `_INBOX.<random>_S.`: the subjects of multi-message requests' own subscriptions, outside `_INBOX.<random>.*`.
    var streamInboxPrefix: String { String(inboxPrefix.dropLast()) + "_S." }

    /// Ends the wait for request `token` with ``NATSError/cancelled``, if it is still waiting.
    func cancelRequest(_ token: UInt64) {
        let (reply, wake) = state.withLock { $0.removeReply(token) }
        wakeDriver(if: wake)
        reply?.fail(.cancelled)
    }

    /// The token at the end of `_INBOX.<random>.<token>`, or nil for anything else.
    func replyToken(_ subject: String) -> UInt64? {
        let bytes = subject.utf8
        let prefix = inboxPrefix.utf8
        guard bytes.count > prefix.count, bytes.count <= prefix.count + 19, bytes.starts(with: prefix) else {
            return nil
        }
        var token: UInt64 = 0
        for byte in bytes.dropFirst(prefix.count) {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            token = token &* 10 &+ UInt64(digit)
        }
        return token
    }

    /// Hands a message that arrived on the shared inbox to its request (on the connection's thread).
    func deliverReply(_ message: NATSMessage) {
        guard let token = replyToken(message.subject) else { return }
        // The server's name is formatted only for the failure that reports it, not for every reply.
        let found = state.withLock { $0.replies.removeValue(forKey: token) }
        guard let reply = found, case .single(let completion) = reply.handler else { return }
        if message.status == 503 && message.payload.isEmpty {
            completion(.failure(.noResponders(subject: reply.subject, server: serverName)))
        } else {
            completion(.success(message))
        }
    }

    /// Hands a message on a multi-message request's own subscription to it; ends the request when
    /// its handler says so.
    func deliverStreamReply(_ message: NATSMessage, token: UInt64) {
        guard let reply = state.withLock({ $0.replies[token] }), case .stream(let handler) = reply.handler else {
            return
        }
        guard !handler(.success(message)) else { return }
        let (_, wake) = state.withLock { $0.removeReply(token) }
        wakeDriver(if: wake)
    }
}
