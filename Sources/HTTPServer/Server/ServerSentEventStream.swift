import Synchronization

/// A Server-Sent Events response in progress. Push events from any thread; each connection
/// buffers at most `eventStreamBufferLimit` bytes, and a send beyond that is refused with
/// `.overflow` (the producer decides: coalesce to the latest state, or close with a reason).
///
/// ```swift
/// let stream = writer.startEventStream { notice in if case .closed = notice { subscribers.remove(id) } }
/// _ = stream.send(ServerSentEvent(event: "state", id: "1", data: json))
/// ```
public final class ServerSentEventStream: Sendable {
    /// What happened to one `send`.
    public enum SendResult: Sendable, Equatable {
        /// The event will be written.
        case queued
        /// Over the buffer limit: nothing was queued; `.drained` is noticed when it empties.
        case overflow
        /// The stream has ended.
        case closed
    }

    private struct State {
        var pending = Pending.none
        /// No more sends are accepted.
        var closed = false
        /// A flush is already on its way to the loop.
        var scheduled = false
        /// A send was refused since the buffer last emptied.
        var overflowed = false
        /// The producer closed the stream: close the connection after writing what is queued.
        var finishing = false
        /// The connection has ended (or is ending): no notices any more.
        var ended = false
        /// The connection made this stream its response (`attach`); with `!ended`, it streams it now.
        var attached = false
    }

    /// Queued chunks, each with the position it shows (see ``EncodedServerSentEvent/position``); one
    /// event (the common case) needs no array.
    private enum Pending {
        case none
        case one([UInt8], UInt64?)
        case many([([UInt8], UInt64?)])

        mutating func append(_ bytes: [UInt8], _ position: UInt64?) {
            switch self {
            case .none: self = .one(bytes, position)
            case .one(let first, let at): self = .many([(first, at), (bytes, position)])
            case .many(var all):
                self = .none
                all.append((bytes, position))
                self = .many(all)
            }
        }
    }

    let connection: Connection
    private let loop: EventLoop
    private let limit: Int
    private let onNotice: @Sendable (EventStreamNotice) -> Void
    private let state = Mutex(State())
    private let queued = Atomic<Int>(0)

    init(connection: Connection, onNotice: @escaping @Sendable (EventStreamNotice) -> Void) {
        self.connection = connection
        self.loop = connection.loop
        self.limit = connection.loop.configuration.eventStreamBufferLimit
        self.onNotice = onNotice
    }

    /// Bytes accepted but not yet written to the socket.
    public var queuedByteCount: Int { queued.load(ordering: .relaxed) }

    /// Encodes and queues `event`.
    public func send(_ event: ServerSentEvent) -> SendResult {
        send(EncodedServerSentEvent(event))
    }

    /// Queues an already encoded event (shared, not copied).
    public func send(_ event: EncodedServerSentEvent) -> SendResult {
        let (result, schedule) = enqueue(event.bytes, event.position)
        if schedule { loop.scheduleFlush(self) }
        return result
    }

    /// Queues an event as part of `batch`: the stream's loop is told when the batch ends, together
    /// with the batch's other streams on that loop.
    public func send(_ event: EncodedServerSentEvent, in batch: inout Batch) -> SendResult {
        let (result, schedule) = enqueue(event.bytes, event.position)
        if schedule { batch.add(self) }
        return result
    }

    /// Queues `head` and then `body` as one event, both or neither, as part of `batch`: a stream that
    /// carries several producers' events (a multiplexed stream) writes its own head (an `id:` only it
    /// knows) before a body shared with other streams, without copying the body. With `force` the event
    /// is queued even past the buffer limit: for a producer's few last words (an `end`), which it bounds.
    public func send(head: [UInt8], body: EncodedServerSentEvent, force: Bool = false, in batch: inout Batch)
        -> SendResult
    {
        let (result, schedule) = enqueue(head, body.bytes, body.position, force: force)
        if schedule { batch.add(self) }
        return result
    }

    /// Sends to many streams with one hand-off per loop: `body` sends with `send(_:in:)`, and when
    /// it returns each loop gets the list of its streams that have new events (one wake-up each).
    public static func batch<T>(_ body: (inout Batch) throws -> T) rethrows -> T {
        var batch = Batch()
        defer { batch.schedule() }
        return try body(&batch)
    }

    /// Streams that have new events, not yet handed to their loops.
    public struct Batch {
        private var streams: [ServerSentEventStream] = []
        /// Some streams belong to another loop than the first one's.
        private var mixed = false

        /// An empty batch; ``schedule()`` hands it over (``batch(_:)`` does both around its body).
        public init() {}

        fileprivate mutating func add(_ stream: ServerSentEventStream) {
            if !mixed, let first = streams.first, first.loop !== stream.loop { mixed = true }
            streams.append(stream)
        }

        /// Tells each loop, once, which of its streams have new events.
        public func schedule() {
            guard let first = streams.first else { return }
            guard mixed else { return first.loop.scheduleFlush(streams) }
            // One pass per loop (there are a handful): hashing every stream into a dictionary cost
            // more than the rest of its fan-out step.
            var loops: [EventLoop] = []
            for stream in streams where !loops.contains(where: { $0 === stream.loop }) { loops.append(stream.loop) }
            for loop in loops { loop.scheduleFlush(streams.filter { $0.loop === loop }) }
        }
    }

    /// Sends one event to many streams: each loop is woken once for all of its streams.
    /// Returns the streams that refused it with `.overflow` (closed streams are skipped).
    @discardableResult
    public static func broadcast(_ event: EncodedServerSentEvent, to streams: [ServerSentEventStream])
        -> [ServerSentEventStream]
    {
        batch { batch in
            streams.filter { $0.send(event, in: &batch) == .overflow }
        }
    }

    /// Ends the stream after what is queued (and `finalEvent`, if any) has been written; the final
    /// event shows what `position` holds (nil: everything appended when it is queued; 0: nothing stored).
    public func close(with finalEvent: ServerSentEvent? = nil, dependingOn position: UInt64? = nil) {
        let schedule = state.withLock { state -> Bool in
            if state.closed { return false }
            state.closed = true
            state.finishing = true
            if let finalEvent {
                let bytes = finalEvent.bytes
                queued.add(bytes.count, ordering: .relaxed)
                state.pending.append(bytes, position)
            }
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if schedule { loop.scheduleFlush(self) }
    }

    /// Queues two chunks as one event (see ``send(head:body:force:in:)``).
    private func enqueue(_ head: [UInt8], _ body: [UInt8], _ position: UInt64?, force: Bool) -> (
        SendResult, schedule: Bool
    ) {
        state.withLock { state in
            if state.closed { return (.closed, false) }
            let count = head.count + body.count
            let current = queued.load(ordering: .relaxed)
            if !force && current > 0 && current + count > limit {
                state.overflowed = true
                return (.overflow, false)
            }
            queued.add(count, ordering: .relaxed)
            if !head.isEmpty { state.pending.append(head, position) }
            state.pending.append(body, position)
            if state.scheduled { return (.queued, false) }
            state.scheduled = true
            return (.queued, true)
        }
    }

    private func enqueue(_ bytes: [UInt8], _ position: UInt64?) -> (SendResult, schedule: Bool) {
        state.withLock { state in
            if state.closed { return (.closed, false) }
            let current = queued.load(ordering: .relaxed)
            // An event larger than the whole limit still goes out alone, or it could never be sent.
            if current > 0 && current + bytes.count > limit {
                state.overflowed = true
                return (.overflow, false)
            }
            queued.add(bytes.count, ordering: .relaxed)
            if case .none = state.pending {
                state.pending = .one(bytes, position)
            } else {
                state.pending.append(bytes, position)
            }
            if state.scheduled { return (.queued, false) }
            state.scheduled = true
            return (.queued, true)
        }
    }

    // MARK: on the loop

    /// The connection has made this stream its response: queued events go to it from now on.
    func attach() {
        state.withLock { $0.attached = true }
        moveOutput()
    }

    /// Moves queued events into the connection's output; a lone event on an idle connection is
    /// written at once, any other output in the loop's flush of this iteration.
    func moveOutput() {
        // `attached && !ended` is "the connection streams this stream" as the loop sees it (both
        // change only on the loop), read with the events instead of from the connection's state,
        // whose payload would be retained and released for every event.
        let (pending, finishing, streaming) = state.withLock { state in
            state.scheduled = false
            let pending = state.pending
            state.pending = .none
            return (pending, state.finishing, state.attached && !state.ended)
        }
        guard streaming else {
            // Not started yet (attach moves it then) or already gone.
            if connection.isClosed { queued.store(0, ordering: .relaxed) }
            return
        }
        switch pending {
        case .none: break
        case .one(let bytes, let position) where !finishing:
            connection.writeStream(bytes, dependingOn: position, for: self)
        case .one(let bytes, let position): connection.queueStream(bytes, dependingOn: position)
        case .many(let all): for (bytes, position) in all { connection.queueStream(bytes, dependingOn: position) }
        }
        if finishing { connection.finishStream() }
    }

    func addQueued(_ count: Int) { queued.add(count, ordering: .relaxed) }

    func didWrite(_ count: Int) { queued.subtract(count, ordering: .relaxed) }

    /// The connection wrote everything: report `.drained` if a send was refused meanwhile.
    func outputDrained() {
        let notify = state.withLock { state -> Bool in
            guard state.overflowed, !state.ended, case .none = state.pending else { return false }
            state.overflowed = false
            return true
        }
        if notify { onNotice(.drained) }
    }

    /// The server is ending the stream (shutdown): no more sends; tell the producer.
    func connectionClosing(reason: String) {
        end(reason: reason)
    }

    /// The connection is gone.
    func connectionClosed(reason: String) {
        queued.store(0, ordering: .relaxed)
        end(reason: reason)
    }

    private func end(reason: String) {
        let notify = state.withLock { state -> Bool in
            let producerClosed = state.finishing
            let alreadyEnded = state.ended
            state.closed = true
            state.ended = true
            state.pending = .none
            return !producerClosed && !alreadyEnded
        }
        if notify { onNotice(.closed(reason: reason)) }
    }
}
