import Synchronization

/// The façade's copy of a remote session: the latest state, version and connection, and the subscribers it fans
/// them out to. Everything happens under one lock; an element is yielded under it too (a yield never calls
/// back), so a new subscriber's first element (the current value) can never overtake a later one. Streams are
/// finished outside the lock, since finishing runs their termination handlers, which take it.
final class ReactorMirror<State: Sendable>: Sendable {
    /// A pulse subscriber: the pulse name it follows, how it decodes and yields (the error when the value does
    /// not decode), how it ends.
    struct PulseSubscriber: Sendable {
        var name: String
        var deliver: @Sendable (PulseEvent) -> ReactorClientError?
        var finish: @Sendable () -> Void
    }

    struct Contents: Sendable {
        var state: State
        var version: UInt64?
        var connection = ConnectionState.connecting
        var lastError: ReactorClientError?
        var ended = false
        /// Errors outlive the stream (actions can still be sent, and fail); they end with the reactor.
        var errorsClosed = false
        var nextID = 0
        var states: [Int: AsyncStream<State>.Continuation] = [:]
        var pulses: [Int: PulseSubscriber] = [:]
        var connections: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
        var errors: [Int: AsyncStream<ReactorClientError>.Continuation] = [:]

        mutating func record(_ error: ReactorClientError) {
            lastError = error
            for continuation in errors.values { continuation.yield(error) }
        }

        mutating func takeID() -> Int {
            nextID += 1
            return nextID
        }
    }

    let contents: Mutex<Contents>

    init(state: State) {
        contents = Mutex(Contents(state: state))
    }

    /// Takes in one event of the session's stream.
    func apply(_ event: SessionEvent<State>) {
        switch event {
        case .state(let update):
            contents.withLock { contents in
                contents.state = update.state
                contents.version = update.version
                for continuation in contents.states.values { continuation.yield(update.state) }
            }
        case .pulse(let pulse):
            contents.withLock { contents in
                for subscriber in contents.pulses.values where subscriber.name == pulse.name {
                    if let error = subscriber.deliver(pulse) { contents.record(error) }
                }
            }
        case .connection(.ended(let reason)):
            end(reason)
        case .connection(let connection):
            contents.withLock { contents in
                contents.connection = connection
                for continuation in contents.connections.values { continuation.yield(connection) }
            }
        }
    }

    /// Records a failed action sent without waiting for its answer (or a pulse value that did not decode).
    func report(_ error: ReactorClientError) {
        contents.withLock { $0.record(error) }
    }

    /// The stream is over: the connection shows `reason` (unless it already ended) and every sequence finishes.
    func end(_ reason: EndReason) {
        let finishers: [@Sendable () -> Void]? = contents.withLock { contents in
            guard !contents.ended else { return nil }
            contents.ended = true
            contents.connection = .ended(reason)
            for continuation in contents.connections.values { continuation.yield(.ended(reason)) }
            var finishers: [@Sendable () -> Void] = contents.states.values.map { continuation in
                { continuation.finish() }
            }
            finishers += contents.pulses.values.map(\.finish)
            finishers += contents.connections.values.map { continuation in { continuation.finish() } }
            return finishers
        }
        for finish in finishers ?? [] { finish() }
    }

    /// The reactor is gone: the error sequences finish too.
    func closeErrors() {
        let continuations = contents.withLock { contents -> [AsyncStream<ReactorClientError>.Continuation] in
            guard !contents.errorsClosed else { return [] }
            contents.errorsClosed = true
            return Array(contents.errors.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// The current state, then every new one; a slow reader skips to the newest.
    func states() -> AsyncStream<State> {
        subscribe(\.states, buffering: .bufferingNewest(1)) { $0.state }
    }

    /// The current connection state, then every change; a slow reader skips to the newest.
    func connections() -> AsyncStream<ConnectionState> {
        subscribe(\.connections, buffering: .bufferingNewest(1)) { $0.connection }
    }

    /// Failures of actions sent without waiting (and pulse values that did not decode), from now on.
    func errors() -> AsyncStream<ReactorClientError> {
        subscribe(\.errors, buffering: .unbounded, over: \.errorsClosed) { _ in nil }
    }

    /// Every later assignment of pulse `name`, decoded as `Value` (values that do not decode are reported as errors).
    func pulses<Value: Decodable & Sendable>(named name: String, as type: Value.Type) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let id = contents.withLock { contents -> Int? in
            guard !contents.ended else { return nil }
            let id = contents.takeID()
            contents.pulses[id] = PulseSubscriber(
                name: name,
                deliver: { pulse in
                    do throws(ReactorClientError) {
                        continuation.yield(try pulse.value(as: Value.self))
                        return nil
                    } catch {
                        return error
                    }
                }, finish: { continuation.finish() })
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.contents.withLock { $0.pulses.removeValue(forKey: id) }
        }
        return stream
    }

    /// Adds a subscriber to `list`, yielding `first` of the contents right away when there is one; the stream is
    /// finished at once when `over` (by default: the session's stream ended) is already true.
    private func subscribe<Element: Sendable>(
        _ list: WritableKeyPath<Contents, [Int: AsyncStream<Element>.Continuation]> & Sendable,
        buffering: AsyncStream<Element>.Continuation.BufferingPolicy,
        over: KeyPath<Contents, Bool> = \.ended,
        first: (Contents) -> Element?
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: buffering)
        let id = contents.withLock { contents -> Int? in
            if let element = first(contents) { continuation.yield(element) }
            guard !contents[keyPath: over] else { return nil }
            let id = contents.takeID()
            contents[keyPath: list][id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.contents.withLock { $0[keyPath: list].removeValue(forKey: id) }
        }
        return stream
    }
}
