import HTTPServer
import JSONCodec
import Synchronization

extension ReactorService {
    /// `POST /sessions/{id}/actions` → 202 `{"seq"}`, or with `?wait=true` 200 `{"seq","version","state"}`.
    func postAction(_ exchange: Exchange) {
        let id = exchange.id
        guard let session = store.session(id), let sendAction = senders.sender(for: session) else {
            return exchange.fail(store.absence(id))
        }
        session.touch(at: context.clock.monotonicNanoseconds())
        guard let body = exchange.jsonBody() else { return }
        let wait: Bool
        let waitText: String?
        do {
            waitText = try exchange.soleQueryValue("wait")
        } catch {
            return exchange.fail(error)
        }
        switch waitText {
        case nil, "false"?, "0"?: wait = false
        case "true"?, "1"?, ""?: wait = true
        case let other?:
            return exchange.fail(APIError(.invalidQuery, "wait must be true or false, got \(JSONWriter.quoted(other))"))
        }
        guard wait else {
            do {
                let (seq, accepting) = try send(id, session, sendAction, body, nil)
                // It acknowledges the session's accept record: only that session's records need be durable.
                exchange.dependsOn = accepting.storedPosition
                Self.withAcceptedBody(seq: seq) { exchange.reply(202, jsonBytes: $0) }
            } catch {
                exchange.fail(error)
            }
            return
        }
        let waiter = ActionWaiter(exchange: exchange)
        do {
            let (seq, accepting) = try send(id, session, sendAction, body) { result in waiter.complete(result) }
            waiter.accepted(seq: seq, by: accepting)
        } catch {
            return waiter.reject(error)
        }
        let timeout = configuration.sessions.waitTimeoutSeconds
        let work = context.clock.schedule(after: .milliseconds(Int64(timeout * 1000))) {
            waiter.timeOut(after: timeout)
        }
        waiter.setTimer(work)
    }
}

extension ReactorService {
    /// The 202's body, `{"seq":N}` and the newline `reply(_:json:)` would append, written on the stack and handed
    /// to `body` for the call: the answer is encoded from it straight into the connection's output (an array made
    /// from the buffer cost an allocation and a free, ~330 instructions per POST). Built with a `JSONWriter`
    /// (appends of literals, an integer, then the newline) it cost ~510 instructions more.
    static func withAcceptedBody<T>(seq: UInt64, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let prefix: StaticString = "{\"seq\":"
        // At most 7 + 20 digits + 2 bytes: four words on the stack.
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &scratch) { scratch in
            let base = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            base.update(from: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
            var digits = 0
            var rest = seq
            repeat {
                digits += 1
                rest /= 10
            } while rest > 0
            var index = prefix.utf8CodeUnitCount + digits - 1
            var value = seq
            repeat {
                base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                value /= 10
                index -= 1
            } while value > 0
            let count = prefix.utf8CodeUnitCount + digits + 2
            base[count - 2] = UInt8(ascii: "}")
            base[count - 1] = UInt8(ascii: "\n")
            return body(UnsafeRawBufferPointer(start: base, count: count))
        }
    }

    /// Sends an action; when the session left memory between the lookup and the send, sends it once
    /// more to the session loaded back (a request must not see a 404 because its session was idle).
    /// `sendAction` is the one registered for the session's reactor (looked up once by the caller).
    /// Returns the action's seq and the session that accepted it.
    func send(
        _ id: String, _ session: any HostedSession, _ sendAction: ReactorDefinition.SendAction, _ body: [UInt8],
        _ completion: (@Sendable (Result<EncodedSnapshot, SessionError>) -> Void)?
    ) throws(SessionError) -> (UInt64, any HostedSession) {
        do {
            return (try sendAction(session, body, completion), session)
        } catch .passivated {
            // Held in memory while sending, so the retry cannot race another passivation.
            let sent = try store.withSessionHeld(id) { reloaded throws(SessionError) -> (UInt64, any HostedSession) in
                guard let sendAction = senders.sender(for: reloaded) else { throw store.absence(id) }
                return (try sendAction(reloaded, body, completion), reloaded)
            }
            guard let sent else { throw store.absence(id) }
            return sent
        }
    }
}

/// Joins the two halves of `?wait=true`: the `seq` (known when `send` returns) and the reduced state
/// (known when the runtime calls back, possibly before `send` returns), racing a timeout.
final class ActionWaiter: Sendable {
    private struct State {
        var seq: UInt64?
        /// The session that accepted the action: the answer shows its records.
        var session: (any HostedSession)?
        var result: Result<EncodedSnapshot, SessionError>?
        var answered = false
        var timer: ScheduledWork?
    }

    private let exchange: Exchange
    private let state = Mutex(State())

    init(exchange: Exchange) { self.exchange = exchange }

    func accepted(seq: UInt64, by session: any HostedSession) {
        let ready = state.withLock { state -> (UInt64, Result<EncodedSnapshot, SessionError>)? in
            state.seq = seq
            state.session = session
            return state.result.flatMap { state.answered ? nil : (seq, $0) }.map { value in
                state.answered = true
                return value
            }
        }
        if let (seq, result) = ready { answer(seq, result) }
    }

    func complete(_ result: Result<EncodedSnapshot, SessionError>) {
        let ready = state.withLock { state -> (UInt64, Result<EncodedSnapshot, SessionError>, ScheduledWork?)? in
            state.result = result
            guard let seq = state.seq, !state.answered else { return nil }
            state.answered = true
            return (seq, result, state.timer)
        }
        if let (seq, result, timer) = ready {
            timer?.cancel()
            answer(seq, result)
        }
    }

    func setTimer(_ work: ScheduledWork) {
        let answered = state.withLock { state -> Bool in
            state.timer = work
            return state.answered
        }
        if answered { work.cancel() }
    }

    func reject(_ error: SessionError) {
        let first = state.withLock { state -> Bool in
            defer { state.answered = true }
            return !state.answered
        }
        if first { exchange.fail(error) }
    }

    func timeOut(after seconds: Double) {
        let seq = state.withLock { state -> UInt64?? in
            guard !state.answered else { return nil }
            state.answered = true
            return .some(state.seq)
        }
        guard let seq else { return }
        let which = seq.map { "action \($0)" } ?? "the action"
        exchange.fail(
            APIError(
                .timeout,
                "\(which) was accepted but its mutations were not all reduced within \(seconds) s "
                    + "(sessions.waitTimeoutSeconds); it keeps running"))
    }

    private func answer(_ seq: UInt64, _ result: Result<EncodedSnapshot, SessionError>) {
        switch result {
        case .success(let snapshot):
            var out = JSONWriter(capacity: 48 + snapshot.state.count)
            out.raw("{\"seq\":")
            out.integer(seq)
            out.raw(",")
            out.snapshotMembers(snapshot)
            out.raw("}")
            // Read after the state was reduced: the position covers its records, and only the
            // session's own need be durable.
            if let session = state.withLock({ $0.session }) { exchange.dependsOn = session.storedPosition }
            exchange.reply(200, json: out.bytes)
        case .failure(let error):
            exchange.fail(error)
        }
    }
}
