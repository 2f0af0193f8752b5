/// A request the server answers by itself: refused by the parser, timed out, unanswered by the
/// responder, or refused because the server is shutting down or full. Each kind maps to one status;
/// the responder renders the answer (``HTTPResponder/response(for:)``), and the connection closes after it.
public struct HTTPRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal; each maps to exactly one status.
    public enum Kind: String, Sendable, CaseIterable {
        case malformedRequestLine, malformedHeader, invalidCharacter, obsoleteLineFolding
        case missingHost, conflictingFraming, invalidContentLength, invalidChunk, invalidTransferEncoding
        case unsupportedTransferCoding, unsupportedMethod, unsupportedVersion, invalidHost
        case requestLineTooLong, headerTooLarge, tooManyHeaders, bodyTooLarge
        /// The request head or body did not arrive in time (408).
        case requestTimeout
        /// The responder did not answer in time (503).
        case responseTimeout
        /// The server reached its shutdown deadline before answering (503).
        case shuttingDown
        /// The server holds as many connections as it may, in all or from this address (503).
        case tooManyConnections
        /// The responder dropped the request without answering (500).
        case noResponse
        /// The answer showed records the server's ``OutputBarrier`` failed to store: it is never sent,
        /// and this refusal goes in its place (503).
        case notStored
    }

    /// What went wrong; decides the status.
    public var kind: Kind
    /// What was wrong, for the client and the log.
    public var message: String

    /// A rejection of `kind` explained by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The status this rejection is answered with.
    public var status: HTTPStatus {
        switch kind {
        case .malformedRequestLine, .malformedHeader, .invalidCharacter, .obsoleteLineFolding,
            .missingHost, .invalidHost, .conflictingFraming, .invalidContentLength, .invalidChunk,
            .invalidTransferEncoding:
            400
        case .unsupportedTransferCoding, .unsupportedMethod: 501
        case .unsupportedVersion: 505
        case .requestLineTooLong: 414
        case .headerTooLarge, .tooManyHeaders: 431
        case .bodyTooLarge: 413
        case .requestTimeout: 408
        case .responseTimeout, .shuttingDown, .tooManyConnections, .notStored: 503
        case .noResponse: 500
        }
    }

    /// `413 bodyTooLarge: …`, for logs.
    public var description: String { "\(status.code) \(kind.rawValue): \(message)" }
}
