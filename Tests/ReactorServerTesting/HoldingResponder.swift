import HTTPServer

/// A responder that answers nothing by itself: it records every request with its writer, and the test
/// answers each when it chooses (a fake upstream that is slow, or never answers; requests held in flight).
///
/// ```swift
/// let upstream = HoldingResponder()
/// try await withHTTPServer(upstream) { _, address in
///     // … something sends a request to `address` …
///     let held = try await upstream.requests.next("the search to reach the upstream") { $0.query("q") == "swift" }
///     held.writer.respond(status: 200, body: Array(#"{"items":[]}"#.utf8))
///     upstream.answerAll(status: 503)   // before the server stops, so it need not wait for them
/// }
/// ```
public final class HoldingResponder: HTTPResponder {
    /// A request as it arrived, with the writer that answers it.
    public struct Held: Sendable {
        /// The request target (path and query).
        public var target: String
        /// The decoded path segments.
        public var pathSegments: [String]
        /// Answers the request (once; later answers are ignored).
        public var writer: HTTPResponseWriter

        /// The decoded value of query parameter `name`.
        public func query(_ name: String) -> String? { HTTPRequest(method: .GET, target: target).queryValue(name) }
    }

    /// Every request held, in arrival order.
    public let requests = Recorder<Held>()
    private let answeredAtOnce: @Sendable (String) -> Bool

    /// Holds every request except those whose path `answeredAtOnce` picks, which get 204 (barriers).
    public init(answeredAtOnce: @escaping @Sendable (_ path: String) -> Bool = { _ in false }) {
        self.answeredAtOnce = answeredAtOnce
    }

    /// Records the request, or answers it at once.
    public func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) {
        if answeredAtOnce(request.path) { return writer.respond(status: 204) }
        requests.record(Held(target: request.target, pathSegments: request.pathSegments, writer: writer))
    }

    /// Answers every request held so far with `status` (those already answered keep their answer).
    public func answerAll(status: Int) {
        for held in requests.values { held.writer.respond(status: status) }
    }
}
