import Dispatch
import HTTPServer
import JSONCodec
import Synchronization

/// The events of several sessions over one SSE response (`GET /events?sessions=a,b,c`). Each session
/// sees one subscriber per stream, whose sink is a ``Part``: the session decides what the part gets,
/// exactly as for a one-session stream, and the part writes it here in API.md's multiplexed words with
/// the stream's ``StreamCursor`` as `id:`. A part ends alone (`event: end`, or `event: error` naming its
/// session); the stream closes after the last part has ended, when its reader falls too far behind
/// (`event: error` `subscriber_too_slow`), or when the reader goes away.
///
/// ```swift
/// let stream = MultiplexedEventStream(
///     sessions: ["a", "b"], incarnations: [7, 9], resumingFrom: cursor, select: nil, selectText: nil)
/// stream.attach(writer.startEventStream(headers: headers) { stream.handle($0) })
/// stream.subscribe(0, to: a) { store.session("a") }
/// stream.end(1, reason: ServerSentEventVocabulary.unknownSession)
/// ```
final class MultiplexedEventStream: RevocableStream {
    /// The ids of the stream's sessions, in the order of `sessions=`.
    let sessions: [String]
    let select: JSONPointer?
    let selectText: String?
    /// Its parts asked for patches after their first state (`?delta=json-patch`).
    let patches: Bool
    /// Per part, the version the client's cursor said it had (nil: from the current state).
    let resumingFrom: [UInt64?]
    private let state: Mutex<State>

    private struct State {
        var sse: ServerSentEventStream?
        var cursor: StreamCursor
        /// Per part: its session and subscriber while subscribed.
        var subscriptions: [(session: any SessionStreamSource, subscriber: Subscriber)?]
        /// Per part: not ended yet.
        var live: [Bool]
        var liveCount: Int
        /// The response has ended (or is ending): nothing more is sent.
        var closed = false
    }

    /// A stream of `sessions`, whose incarnations mark its cursor, resuming where the client's `cursor` says
    /// (a session whose incarnation differs from the one the cursor was read from starts from its current state).
    init(
        sessions: [String], incarnations: [UInt64], resumingFrom cursor: StreamCursor?, select: JSONPointer?,
        selectText: String?, patches: Bool = false
    ) {
        self.sessions = sessions
        self.select = select
        self.selectText = selectText
        self.patches = patches
        var start = StreamCursor(sessions: sessions, incarnations: incarnations)
        if let cursor { start.positions = cursor.positions(resumingOn: start) }
        resumingFrom = start.positions
        state = Mutex(
            State(
                cursor: start, subscriptions: Array(repeating: nil, count: sessions.count),
                live: Array(repeating: true, count: sessions.count), liveCount: sessions.count))
    }

    /// Takes the response the events go to (its notices come to ``handle(_:)``).
    func attach(_ sse: ServerSentEventStream) {
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.sse = sse }
            return state.closed
        }
        if closed { sse.close() }
    }

    /// Subscribes part `index` to `session`. One that leaves memory meanwhile is looked up again with
    /// `lookup` (it loads back), a few times; one that ended meanwhile ends the part as deleted. `hold`
    /// counts the part against its client address until it has left its session (or, never taken in, now).
    func subscribe(
        _ index: Int, to session: any SessionStreamSource, hold: AddressQuota.Hold? = nil,
        lookup: () -> (any SessionStreamSource)?
    ) {
        let subscriber = Subscriber(
            lastEventID: resumingFrom[index], select: select, selectText: selectText, patches: patches, hold: hold)
        let part = Part(index: index, sessionID: sessions[index], stream: self)
        var taken = false
        defer { if !taken { hold?.release() } }
        var session = session
        for _ in 0..<3 {
            // Registered first: a notice that comes while the session adds the subscriber reaches it.
            let open = state.withLock { state -> Bool in
                guard !state.closed, state.live[index] else { return false }
                state.subscriptions[index] = (session, subscriber)
                return true
            }
            guard open else { break }
            switch session.subscribe(subscriber, sink: part) {
            case .subscribed:
                taken = true
                return
            case .ended:
                return finish(index, .deleted)
            case .passivated:
                // Not found again right now (in a cluster it may be on its way to another instance): the part
                // ends with an error, so the client reconnects, and is told `unknown_session` then if it is gone.
                guard let again = lookup() else { break }
                session = again
            }
        }
        finish(
            index,
            .unavailable(
                code: ServerSentEventVocabulary.sessionPassivated,
                message: ServerSentEventVocabulary.sessionPassivatedMessage))
    }

    /// Ends part `index` before it subscribed: `event: end` with `reason` (`unknown_session`, `unauthorized`, …).
    func end(_ index: Int, reason: String) {
        state.withLock { state in
            guard state.live[index], !state.closed else { return }
            endPart(
                index,
                with: ServerSentEventVocabulary.multiplexedEnd(
                    session: sessions[index], reason: reason, cursor: state.cursor.text), &state)
        }
    }

    /// Ends part `index` with an error naming its session (`storage_unavailable`, `session_moved`, …).
    func fail(_ index: Int, code: String, message: String) {
        finish(index, .unavailable(code: code, message: message))
    }

    /// Ends the part of session `id` (every part when nil) with `event: end` `unauthorized`: the credential
    /// that opened it stopped being valid. Its subscriber leaves the session; after the last part, the
    /// response closes.
    func revoke(_ id: String?, message: String) {
        let leaving = state.withLock { state -> [(session: any SessionStreamSource, subscriber: Subscriber)] in
            var leaving: [(session: any SessionStreamSource, subscriber: Subscriber)] = []
            for index in sessions.indices where id == nil || sessions[index] == id {
                guard !state.closed, state.live[index] else { continue }
                if let subscription = state.subscriptions[index] { leaving.append(subscription) }
                let end = ServerSentEventVocabulary.multiplexedEnd(
                    session: sessions[index], reason: ServerSentEventVocabulary.unauthorized, cursor: state.cursor.text)
                endPart(index, with: end, &state)
            }
            return leaving
        }
        for (session, subscriber) in leaving { session.handle(.closed, for: subscriber) }
    }

    /// A notice of the response: it drained (every part's session sends what it held back) or it ended
    /// (every part leaves its session).
    func handle(_ notice: EventStreamNotice) {
        switch notice {
        case .drained:
            let subscriptions = state.withLock { $0.subscriptions.compactMap { $0 } }
            for (session, subscriber) in subscriptions { session.handle(.drained, for: subscriber) }
        case .closed:
            let subscriptions = state.withLock { state in
                state.closed = true
                return close(&state)
            }
            for (session, subscriber) in subscriptions { session.handle(.closed, for: subscriber) }
        }
    }

    /// Bytes the response has queued.
    var queuedByteCount: Int { state.withLock { $0.sse?.queuedByteCount ?? 0 } }

    // MARK: From the parts (under their session's lock)

    /// Queues a part's state or pulse, headed by the cursor that counts it.
    func send(_ event: SessionEvent, from part: Part, in batch: inout DeliveryBatch) -> DeliveryResult {
        let session = part.sessionID
        let index = part.index
        return batch.withFlush(EventStreamFlush.self) { flush in
            let body = event.wire(for: ObjectIdentifier(Part.self)) { event in
                switch event.kind {
                case .state(let version):
                    ServerSentEventVocabulary.multiplexedState(session: session, version: version, json: event.json)
                case .patch(let version):
                    ServerSentEventVocabulary.multiplexedPatch(session: session, version: version, json: event.json)
                case .pulse(let name, let count):
                    ServerSentEventVocabulary.multiplexedPulse(
                        session: session, name: name, count: count, value: event.json)
                }
            }
            return send(
                event.kind, body: EncodedServerSentEvent(bytes: body, position: event.position), index: index,
                flush: flush)
        }
    }

    /// Queues one event of part `index`, the cursor counting it in its head.
    private func send(_ kind: SessionEvent.Kind, body: EncodedServerSentEvent, index: Int, flush: EventStreamFlush)
        -> DeliveryResult
    {
        state.withLock { state in
            guard state.live[index], let sse = state.sse else { return .closed }
            let head: [UInt8]
            let previous = state.cursor.positions[index]
            switch kind {
            case .state(let version):
                state.cursor.positions[index] = version
                head = ServerSentEventVocabulary.multiplexedHead("state", cursor: state.cursor)
            case .patch(let version):
                state.cursor.positions[index] = version
                head = ServerSentEventVocabulary.multiplexedHead("patch", cursor: state.cursor)
            case .pulse:
                head = ServerSentEventVocabulary.multiplexedHead("pulse", cursor: state.cursor)
            }
            let result = sse.send(head: head, body: body, in: &flush.batch)
            if result != .queued { state.cursor.positions[index] = previous }
            return DeliveryResult(result)
        }
    }

    /// Ends part `index` as its session says; a part too slow to read ends the whole stream, whose other
    /// parts then leave their sessions from another thread (this one holds a session's lock).
    func finish(_ index: Int, _ end: SubscriptionEnd) {
        let leaving = state.withLock { state -> [(session: any SessionStreamSource, subscriber: Subscriber)] in
            guard state.live[index], !state.closed else { return [] }
            let session = sessions[index]
            switch end {
            case .deleted:
                let event = ServerSentEventVocabulary.multiplexedEnd(
                    session: session, reason: ServerSentEventVocabulary.sessionDeleted, cursor: state.cursor.text)
                endPart(index, with: event, position: nil, &state)
                return []
            case .unavailable(let code, let message):
                endPart(
                    index,
                    with: ServerSentEventVocabulary.error(
                        session: session, code: code, message: message, cursor: state.cursor.text), &state)
                return []
            case .tooSlow(let message):
                state.subscriptions[index] = nil
                let code = ServerSentEventVocabulary.subscriberTooSlow
                let cursor = state.cursor.text
                let event = ServerSentEventVocabulary.error(session: nil, code: code, message: message, cursor: cursor)
                state.sse?.close(with: event, dependingOn: 0)
                return close(&state)
            }
        }
        guard !leaving.isEmpty else { return }
        DispatchQueue.global().async {
            for (session, subscriber) in leaving { session.handle(.closed, for: subscriber) }
        }
    }

    /// Ends one part with its last event; after the last part's, the response closes. `position` is
    /// what the event shows (nil: everything appended; 0: nothing stored, as an error or a part that
    /// never started).
    private func endPart(_ index: Int, with event: ServerSentEvent, position: UInt64? = 0, _ state: inout State) {
        state.live[index] = false
        state.subscriptions[index] = nil
        state.liveCount -= 1
        guard let sse = state.sse else { return }
        if state.liveCount == 0 {
            sse.close(with: event, dependingOn: position)
            _ = close(&state)
        } else {
            // Past the buffer limit if need be: a part's end must not be lost, and there is one per part.
            let body = EncodedServerSentEvent(event, position: position)
            ServerSentEventStream.batch { _ = sse.send(head: [], body: body, force: true, in: &$0) }
        }
    }

    /// Marks the stream closed and lets go of the response and the subscriptions (which refer back to
    /// this stream); returns the subscriptions still live.
    private func close(_ state: inout State) -> [(session: any SessionStreamSource, subscriber: Subscriber)] {
        let live = state.subscriptions.compactMap { $0 }
        state.closed = true
        state.sse = nil
        state.subscriptions = Array(repeating: nil, count: state.subscriptions.count)
        for index in state.live.indices { state.live[index] = false }
        state.liveCount = 0
        return live
    }
}

extension MultiplexedEventStream {
    /// One session's part of a multiplexed stream: the sink of that session's subscriber.
    final class Part: SubscriberSink {
        let index: Int
        let sessionID: String
        let stream: MultiplexedEventStream

        init(index: Int, sessionID: String, stream: MultiplexedEventStream) {
            self.index = index
            self.sessionID = sessionID
            self.stream = stream
        }

        func send(_ event: SessionEvent, in batch: inout DeliveryBatch) -> DeliveryResult {
            stream.send(event, from: self, in: &batch)
        }

        func finish(_ end: SubscriptionEnd) { stream.finish(index, end) }

        var queuedByteCount: Int { stream.queuedByteCount }
    }
}
