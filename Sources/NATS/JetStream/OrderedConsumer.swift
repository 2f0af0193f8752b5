import Dispatch
import Glibc
import Logs
import Synchronization

/// Follows what a stream stores on some subjects, in order and without gaps, for as long as it
/// runs: an ephemeral push consumer (no acknowledgements, in memory, one replica) delivering to an
/// inbox of its own, the "ordered consumer" of the NATS clients. A gap in the consumer's sequence,
/// a silence longer than three idle heartbeats, a failed creation or a reconnect makes it start a
/// new consumer from the last stream sequence it delivered + 1, so every message is delivered once,
/// in stream order, however often the server or the connection changes.
///
/// Messages and `caughtUp` are delivered on the connection's thread; they must not block.
///
/// ```swift
/// let watch = OrderedConsumer(
///     jetStream: js, stream: "KV_sessions", filter: "$KV.sessions.>", start: .lastPerSubject
/// ) { message in
///     print(message.subject, message.sequence)
/// } caughtUp: {
///     print("every message stored at the start was delivered")
/// }
/// watch.start()
/// ```
public final class OrderedConsumer: Sendable {
    /// The JetStream context it reads through.
    public let jetStream: JetStream
    /// The stream it reads.
    public let stream: String
    /// The subjects it follows (wildcards allowed).
    public let filter: String
    let startPolicy: ConsumerConfig.DeliverPolicy
    let heartbeat: Duration
    let handler: @Sendable (StoredMessage) -> Void
    let caughtUp: @Sendable () -> Void
    let state = Mutex(State())
    let queue = DispatchQueue(label: "nats.ordered-consumer")

    struct State {
        var generation: UInt64 = 0
        var subscription: NATSSubscription?
        var consumer: String?
        /// The stream sequence after the last message delivered (0 before the first).
        var next: UInt64 = 0
        var expectedConsumerSequence: UInt64 = 1
        var lastHeard = ContinuousClock.now
        var hasCaughtUp = false
        var running = false
        var failures = 0
    }

    /// A consumer of `filter` on `stream` that starts with `start` (all messages, or the last of each
    /// subject, as a key-value watcher does); `heartbeat` is the idle heartbeat asked of the server.
    public init(
        jetStream: JetStream, stream: String, filter: String, start: ConsumerConfig.DeliverPolicy = .all,
        heartbeat: Duration = .seconds(2),
        handler: @escaping @Sendable (StoredMessage) -> Void, caughtUp: @escaping @Sendable () -> Void = {}
    ) {
        self.jetStream = jetStream
        self.stream = stream
        self.filter = filter
        startPolicy = start
        self.heartbeat = heartbeat
        self.handler = handler
        self.caughtUp = caughtUp
    }

    /// Whether every message stored when it started has been delivered.
    public var hasCaughtUp: Bool { state.withLock { $0.hasCaughtUp } }

    /// Starts following if it has not, then waits until ``hasCaughtUp`` (looking every 5 ms), calling `stillWaiting`
    /// every `interval` meanwhile; false when it has not caught up within `limit`. Blocks the calling thread: for
    /// start-up, never on the connection's thread.
    public func startAndWaitUntilCaughtUp(
        within limit: Duration, stillWaitingEvery interval: Duration = .seconds(5), stillWaiting: () -> Void = {}
    ) -> Bool {
        start()
        let started = ContinuousClock.now
        var reported = started
        while !hasCaughtUp {
            let now = ContinuousClock.now
            if now - started > limit { return false }
            if now - reported > interval {
                stillWaiting()
                reported = now
            }
            usleep(5_000)
        }
        return true
    }

    /// Starts following; the first consumer is created at once.
    public func start() {
        let first = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            return true
        }
        guard first else { return }
        scheduleSilenceCheck()
        jetStream.connection.observeStatus { [weak self] status in
            if case .connected = status { self?.restart(after: .zero, reason: "reconnected") }
        }
        restart(after: .zero, reason: nil)
    }

    /// Checks once per heartbeat that the consumer still speaks, while running.
    func scheduleSilenceCheck() {
        queue.asyncAfter(deadline: .now() + heartbeat.timeInterval) { [weak self] in
            guard let self, state.withLock({ $0.running }) else { return }
            checkSilence()
            scheduleSilenceCheck()
        }
    }

    /// Stops following and deletes the current consumer.
    public func stop() {
        let (subscription, consumer) = state.withLock { state in
            state.running = false
            state.generation += 1
            defer {
                state.subscription = nil
                state.consumer = nil
            }
            return (state.subscription, state.consumer)
        }
        subscription?.unsubscribe()
        if let consumer { jetStream.deleteConsumerLater(stream: stream, name: consumer) }
    }

    /// Drops the current consumer and creates a new one from the next sequence after `delay`.
    func restart(after delay: Duration, reason: String?) {
        let (generation, old, consumer) = state.withLock { state -> (UInt64, NATSSubscription?, String?) in
            state.generation += 1
            defer {
                state.subscription = nil
                state.consumer = nil
            }
            return (state.generation, state.subscription, state.consumer)
        }
        old?.unsubscribe()
        if let consumer { jetStream.deleteConsumerLater(stream: stream, name: consumer) }
        if let reason {
            jetStream.connection.options.logger.debug(
                "a stream reader starts over", ["stream": .string(stream), "reason": .string(reason)])
        }
        if delay == .zero {
            create(generation)
        } else {
            queue.asyncAfter(deadline: .now() + delay.timeInterval) { [weak self] in self?.create(generation) }
        }
    }

    /// Subscribes a fresh inbox and creates the consumer that delivers to it.
    func create(_ generation: UInt64) {
        let inbox = "_INBOX." + Self.randomToken()
        let start = state.withLock { state -> ConsumerConfig.DeliverPolicy? in
            guard state.running, state.generation == generation else { return nil }
            state.expectedConsumerSequence = 1
            state.lastHeard = .now
            return state.next > 0 ? .byStartSequence(state.next) : startPolicy
        }
        guard let start else { return }
        var config = ConsumerConfig(filterSubject: filter, deliverPolicy: start, ackPolicy: .none)
        config.deliverSubject = inbox
        config.idleHeartbeat = heartbeat
        config.memoryStorage = true
        config.replicas = 1
        do throws(NATSError) {
            let subscription = try jetStream.connection.subscribe(to: inbox) { [weak self] message in
                self?.receive(message, generation: generation)
            }
            let current = state.withLock { state -> Bool in
                guard state.generation == generation else { return false }
                state.subscription = subscription
                return true
            }
            guard current else { return subscription.unsubscribe() }
            try jetStream.createConsumer(stream: stream, config) { [weak self] result in
                self?.created(result, generation: generation)
            }
        } catch {
            failed(generation)
        }
    }

    func created(_ result: Result<ConsumerInfo, NATSError>, generation: UInt64) {
        guard case .success(let info) = result else { return failed(generation) }
        let (current, caught) = state.withLock { state -> (Bool, Bool) in
            guard state.generation == generation else { return (false, false) }
            state.consumer = info.name
            state.failures = 0
            guard info.pending == 0, state.expectedConsumerSequence == 1, !state.hasCaughtUp else {
                return (true, false)
            }
            state.hasCaughtUp = true
            return (true, true)
        }
        if !current { jetStream.deleteConsumerLater(stream: stream, name: info.name) }
        if caught { caughtUp() }
    }

    /// A consumer could not be made: try again with a growing pause (100 ms to 2 s).
    func failed(_ generation: UInt64) {
        let delay = state.withLock { state -> Duration? in
            guard state.generation == generation, state.running else { return nil }
            state.failures += 1
            return min(.milliseconds(100) * (1 << min(state.failures - 1, 5)), .seconds(2))
        }
        if let delay { restart(after: delay, reason: "consumer creation failed") }
    }

    func receive(_ message: NATSMessage, generation: UInt64) {
        enum Outcome { case ignore, deliver(StoredMessage, caughtUp: Bool), gap }
        let outcome = state.withLock { state -> Outcome in
            guard state.generation == generation, state.running else { return .ignore }
            state.lastHeard = .now
            if message.status == 100 {
                // An idle heartbeat names the last consumer sequence sent: one we never saw is a gap.
                if let last = message.headers["Nats-Last-Consumer"].flatMap(UInt64.init),
                    last >= state.expectedConsumerSequence
                {
                    return .gap
                }
                return .ignore
            }
            guard message.status == nil, let stored = JetStream.storedMessage(fromDelivery: message, stream: stream),
                stored.consumerSequence == state.expectedConsumerSequence
            else { return .gap }
            state.expectedConsumerSequence += 1
            state.next = stored.sequence + 1
            let caught = stored.pending == 0 && !state.hasCaughtUp
            if caught { state.hasCaughtUp = true }
            return .deliver(stored, caughtUp: caught)
        }
        switch outcome {
        case .ignore: return
        case .gap: restart(after: .zero, reason: "gap")
        case .deliver(let stored, let caught):
            handler(stored)
            if caught { caughtUp() }
        }
    }

    /// Restarts the consumer when nothing, not even a heartbeat, came for three heartbeats.
    func checkSilence() {
        let silent = state.withLock { state in state.running && ContinuousClock.now - state.lastHeard > heartbeat * 3 }
        if silent { restart(after: .zero, reason: "silent") }
    }

    /// 22 random letters and digits (about 131 bits): an inbox or an identity no one else has.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        return String(
            decoding: (0..<22).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }, as: UTF8.self)
    }
}

extension Duration {
    /// As a Dispatch interval.
    var timeInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
