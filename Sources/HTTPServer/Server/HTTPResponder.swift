/// What answers requests: the whole application plugs into the server through this.
///
/// ```swift
/// struct Hello: HTTPResponder {
///     func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
///         writer.respond(status: 200, headers: ["Content-Type": "text/plain"], body: Array("hi\n".utf8))
///     }
/// }
/// ```
public protocol HTTPResponder: Sendable {
    /// Called on the connection's loop for each complete request; must not block. Answer through
    /// `writer` now or later, from any thread, exactly once (a response or an event stream).
    /// The request is handed over (`consuming`): a conformer that keeps it stores it without a copy.
    func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter)
    /// The answer the server gives by itself (a request the parser refused, a timeout, shutdown, a
    /// connection limit, a request left unanswered); the connection closes after it. Called on a
    /// loop: keep it cheap and non-blocking.
    func response(for rejection: HTTPRejection) -> HTTPResponse
}

extension HTTPResponder {
    /// A plain-text body with the rejection's message.
    public func response(for rejection: HTTPRejection) -> HTTPResponse {
        HTTPResponse(status: rejection.status, text: rejection.message + "\n")
    }
}

/// A notice to an event stream's producer, delivered on the connection's loop (do not block in it).
public enum EventStreamNotice: Sendable, Equatable {
    /// The output buffer emptied after a send reported `.overflow`: sending works again.
    case drained
    /// The stream ended without the producer closing it: peer gone, timeout, or server shutdown.
    case closed(reason: String)
}
