import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the reader of a stream decides after each event.
enum EventVerdict: Sendable {
    /// Keep reading.
    case next
    /// The stream is over (`event: end`): close it, do not reconnect.
    case finish(reason: String)
    /// The server asks for a new connection (`event: error`): close, wait, reconnect with `Last-Event-ID`.
    case reconnect(ReactorClientError)
    /// The reader cannot go on from this event (a patch that does not apply): close, wait, and reconnect with
    /// `lastEventID` (the last event it could read) instead of this event's id, so the server sends a whole state.
    case resync(ReactorClientError, lastEventID: String)
    /// Give up for good (an event that cannot be read).
    case fail(ReactorClientError)
}

/// The reconnecting loop under every event stream, as an `EventSource` runs it: connect with `Last-Event-ID`,
/// parse, hand each event to the reader, and after a drop wait (``ReconnectPolicy``, the server's `retry:`, at
/// least a refusal's `Retry-After`) and connect again, until the reader finishes,
/// an answer says waiting will not help, or the task is cancelled.
///
/// It reports ``ConnectionState`` changes as they happen and returns why it ended; cancelling the task that runs
/// it closes the connection (or ends the wait) at once and returns ``EndReason/stopped``.
struct EventStreamDriver: Sendable {
    /// Limits, policy, clock and the stream session's settings.
    let configuration: ReactorClient.Configuration
    /// The request of one attempt, given the last event ID to resume from (empty: none).
    let makeRequest: @Sendable (_ lastEventID: String) -> URLRequest

    /// What one attempt ended with.
    private enum Attempt {
        case finished(String)
        case failed(ReactorClientError)
        /// Closed or refused for a reason that may pass; `notBefore` is the answer's `Retry-After`.
        case dropped(ReactorClientError, accepted: Bool, notBefore: Duration? = nil)
        case cancelled
    }

    /// What carries over from one attempt to the next.
    private struct Progress {
        var lastEventID: String
        var serverRetry: Duration?
    }

    /// Runs attempts until the stream ends; see the type's documentation.
    func run(
        lastEventID: String, connection report: (ConnectionState) -> Void, event read: (ServerSentEvent) -> EventVerdict
    ) async -> EndReason {
        var progress = Progress(lastEventID: lastEventID)
        var failures = 0
        while true {
            if Task.isCancelled { return .stopped }
            report(.connecting)
            switch await attempt(&progress, report: report, read: read) {
            case .finished(let reason): return .finished(reason: reason)
            case .failed(let error): return .failed(error)
            case .cancelled: return .stopped
            case .dropped(let cause, let accepted, let notBefore):
                if accepted { failures = 0 }
                var delay = configuration.reconnect.delay(
                    failures: failures, serverRetry: progress.serverRetry, random: Double.random(in: 0..<1))
                if let notBefore { delay = max(delay, notBefore) }
                failures += 1
                report(.reconnecting(after: delay, cause: cause))
                do {
                    try await configuration.clock.sleep(for: delay)
                } catch {
                    return .stopped
                }
            }
        }
    }

    /// One connection, from request to close.
    private func attempt(
        _ progress: inout Progress, report: (ConnectionState) -> Void, read: (ServerSentEvent) -> EventVerdict
    ) async -> Attempt {
        let connection = EventStreamConnection(
            request: makeRequest(progress.lastEventID), configuration: configuration.streamSessionConfiguration)
        defer { connection.cancel() }
        var parser = ServerSentEventParser(limits: configuration.eventLimits, lastEventID: progress.lastEventID)
        var accepted = false
        var refusal: (status: Int, body: [UInt8], retryAfter: Duration?)?
        for await part in connection.parts {
            switch part {
            case .response(let status, let contentType, let retryAfter):
                if status == 200 && contentType.lowercased().hasPrefix("text/event-stream") {
                    accepted = true
                    report(.connected)
                } else {
                    refusal = (status, [], retryAfter)
                }
            case .bytes(let data):
                if refusal != nil {
                    // Keep the start of an error body, enough for its code and message.
                    if refusal!.body.count < 65536 {
                        refusal!.body.append(contentsOf: data.prefix(65536 - refusal!.body.count))
                    }
                    continue
                }
                if let outcome = Self.parse(data, &parser, &progress, read: read) { return outcome }
            case .end(let error):
                if let refusal {
                    let cause =
                        refusal.status == 200
                        ? ReactorClientError.invalidResponse(
                            "an event stream was answered without Content-Type text/event-stream")
                        : ReactorClientError.answer(status: refusal.status, body: refusal.body)
                    return cause.isTransient
                        ? .dropped(cause, accepted: false, notBefore: refusal.retryAfter) : .failed(cause)
                }
                if error == .cancelled { return .cancelled }
                return .dropped(error ?? .transport("the server closed the event stream"), accepted: accepted)
            }
        }
        return .cancelled
    }

    /// Feeds one chunk to the parser and each event to the reader; an outcome when the attempt is over.
    private static func parse(
        _ data: Data, _ parser: inout ServerSentEventParser, _ progress: inout Progress,
        read: (ServerSentEvent) -> EventVerdict
    ) -> Attempt? {
        var offset = data.startIndex
        while true {
            let (consumed, step) = data[offset...].withUnsafeBytes { parser.parse($0) }
            offset += consumed
            progress.lastEventID = parser.lastEventID
            if let retry = parser.reconnectionTime { progress.serverRetry = retry }
            switch step {
            case .needMore:
                return nil
            case .rejected(let rejection):
                return .failed(.invalidResponse("the event stream broke a limit of this client: \(rejection)"))
            case .event(let event):
                switch read(event) {
                case .next: continue
                case .finish(let reason): return .finished(reason)
                case .reconnect(let cause): return .dropped(cause, accepted: true)
                case .resync(let cause, let lastEventID):
                    progress.lastEventID = lastEventID
                    return .dropped(cause, accepted: true)
                case .fail(let error): return .failed(error)
                }
            }
        }
    }
}

extension URLRequest {
    /// A GET of an event stream: `Accept`, no cache, and `Last-Event-ID` when there is one to resume from.
    static func eventStream(_ url: URL, lastEventID: String, bearer: String?) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        if !lastEventID.isEmpty { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        return request
    }
}
