/// What the connection's thread asks of the shared state. Callbacks are collected under the lock
/// and run after it is released, so a callback may call back into the connection.
extension NATSConnection {
    var isClosing: Bool { state.withLock { $0.closing } }

    /// Whether the connection should move to the preferred server now (asked once per change of preference).
    func takeMoveRequest() -> Bool {
        state.withLock { state in
            defer { state.moveRequested = false }
            return state.moveRequested
        }
    }

    /// The earliest pending deadline (request, flush or connect waiter).
    func nextDeadline() -> ContinuousClock.Instant? { state.withLock { $0.deadlines.earliest } }

    /// Moves the queued output into `buffer` (which must be empty); its capacity is reused.
    func takeOutbound(into buffer: inout [UInt8]) {
        state.withLock { state in
            swap(&state.outbound, &buffer)
            state.wakePending = false
        }
    }

    /// Records a new connection and returns its first output: the reply inbox and every
    /// subscription, then what was queued while disconnected. Observers and connect waiters are
    /// told once the state says connected.
    func didConnect(to server: NATSServerAddress, info: ServerInfo) -> [UInt8] {
        let status = Status.connected(server: server.description)
        let (output, observers, waiters) = state.withLock { state in
            state.server = server
            state.status = status
            // A move asked for on the connection that ended is done by this one (it looked for the preferred first).
            state.moveRequested = false
            state.lastAttempts = []
            learn(info, from: server, into: &state)
            var output: [UInt8] = []
            ClientCommand.subscribe(subject: inboxPrefix + "*", queue: nil, sid: Self.inboxSID, into: &output)
            for (sid, subscription) in state.subscriptions.sorted(by: { $0.key < $1.key }) {
                ClientCommand.subscribe(
                    subject: subscription.subject, queue: subscription.queue, sid: sid, into: &output)
            }
            output += state.outbound
            state.outbound.removeAll(keepingCapacity: true)
            state.wakePending = false
            let waiters = Array(state.connectWaiters.values)
            state.connectWaiters.removeAll()
            return (output, state.observers, waiters)
        }
        for observer in observers { observer(status) }
        for waiter in waiters { waiter(.success(())) }
        return output
    }

    /// A later `INFO` on a live connection (cluster changes, new limits).
    func updateInfo(_ info: ServerInfo, from server: NATSServerAddress) {
        state.withLock { learn(info, from: server, into: &$0) }
    }

    private func learn(_ info: ServerInfo, from server: NATSServerAddress, into state: inout ConnectionState) {
        state.info = info
        state.maxPayload = info.maxPayload
        guard options.discoverServers else { return }
        for url in info.connectURLs {
            // Servers learned from a cluster use the credentials of the server that told us about them.
            guard var learned = try? NATSServerAddress(parsing: url) else { continue }
            guard !state.servers.contains(where: { $0.sameEndpoint(as: learned) }) else { continue }
            learned.user = server.user
            learned.password = server.password
            learned.token = server.token
            state.servers.append(learned)
        }
    }

    /// A whole pass over the servers failed; returns whether to keep trying. Connect waiters fail
    /// at once when a server refused us (credentials, TLS); reconnecting gives up after
    /// ``NATSOptions/maxReconnectAttempts`` passes.
    func passFailed(attempts: [String], refusal: NATSError?, failedPasses: Int) -> Bool {
        let (waiters, error) = state.withLock { state -> ([@Sendable (Result<Void, NATSError>) -> Void], NATSError?) in
            state.lastAttempts = attempts
            var error: NATSError?
            if let refusal, !state.connectWaiters.isEmpty { error = refusal }
            if let max = options.maxReconnectAttempts, failedPasses >= max {
                error = error ?? .cannotConnect(attempts: attempts)
            }
            guard let error else { return ([], nil) }
            state.closing = true
            let waiters = Array(state.connectWaiters.values)
            state.connectWaiters.removeAll()
            return (waiters, error)
        }
        guard let error else { return true }
        options.logger.error("NATS connection gives up", ["error": .string(error.description)])
        // Closed before the waiters hear why: a caller whose connect failed must not still read
        // `connecting` (the thread's own finish() would say it a moment later).
        setStatus(.closed)
        for waiter in waiters { waiter(.failure(error)) }
        return false
    }

    /// Queues a keep-alive `PING`; its `PONG` only proves the server alive. It goes past the
    /// outbound limit: a full buffer is exactly when a server that stopped reading must be noticed.
    func enqueueKeepAlivePing() {
        let wake = state.withLock { state -> Bool in
            guard let wake = try? state.enqueue(limit: .max, { ClientCommand.ping(into: &$0) }) else { return false }
            let id = state.nextPingID
            state.nextPingID += 1
            state.pings.append(PendingPing(id: id, epoch: state.epoch, timeout: .zero, completion: nil))
            return wake
        }
        wakeDriver(if: wake)
    }

    /// A `PONG` arrived: it answers the oldest `PING` still waiting.
    func pongReceived() {
        let completion = state.withLock { state -> (@Sendable (Result<Void, NATSError>) -> Void)? in
            guard !state.pings.isEmpty else { return nil }
            return state.pings.removeFirst().completion
        }
        completion?(.success(()))
    }

    /// The handler of subscription `sid`, if it is still subscribed.
    func subscriptionHandler(_ sid: UInt64) -> (@Sendable (NATSMessage) -> Void)? {
        state.withLock { $0.subscriptions[sid]?.handler }
    }

    /// Fails whatever is due at `now`: requests time out, flushes time out, and a connect waiter
    /// that is still waiting closes the connection with the failures seen so far.
    func expireDue(now: ContinuousClock.Instant) {
        var expired: [() -> Void] = []
        var wake = false
        state.withLock { state in
            // Most entries popped belong to requests already answered: the server's name is formatted only
            // for those still waiting, not once per request.
            while let kind = state.deadlines.popDue(now) {
                switch kind {
                case .reply(let token):
                    let (removed, unsubscribe) = state.removeReply(token)
                    wake = wake || unsubscribe
                    guard let reply = removed else { continue }
                    let server = state.serverName
                    expired.append {
                        reply.fail(.timedOut(subject: reply.subject, server: server, after: reply.timeout))
                    }
                case .ping(let id):
                    guard let index = state.pings.firstIndex(where: { $0.id == id }),
                        let completion = state.pings[index].completion
                    else { continue }
                    let server = state.serverName
                    state.pings[index].completion = nil
                    let timeout = state.pings[index].timeout
                    expired.append { completion(.failure(.timedOut(subject: "PING", server: server, after: timeout))) }
                case .connect(let id):
                    guard let waiter = state.connectWaiters.removeValue(forKey: id) else { continue }
                    state.closing = true
                    let attempts =
                        state.lastAttempts.isEmpty
                        ? ["no server answered in time (first attempt still running)"] : state.lastAttempts
                    expired.append { waiter(.failure(.cannotConnect(attempts: attempts))) }
                }
            }
        }
        wakeDriver(if: wake)
        for fire in expired { fire() }
    }
}
