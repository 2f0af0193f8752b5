/// Why the parser refused a request: the status it maps to and a message for the client.
/// The connection is always closed after a rejection.
public struct HTTPRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal; each maps to exactly one status.
    public enum Kind: String, Sendable, CaseIterable {
        case malformedRequestLine, malformedHeader, invalidCharacter, obsoleteLineFolding
        case missingHost, conflictingFraming, invalidContentLength, invalidChunk, invalidTransferEncoding
        case unsupportedTransferCoding, unsupportedMethod, unsupportedVersion, invalidHost
        case requestLineTooLong, headerTooLarge, tooManyHeaders, bodyTooLarge
        case requestTimeout
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
            .missingHost, .invalidHost, .conflictingFraming, .invalidContentLength, .invalidChunk, .invalidTransferEncoding:
            400
        case .unsupportedTransferCoding, .unsupportedMethod: 501
        case .unsupportedVersion: 505
        case .requestLineTooLong: 414
        case .headerTooLarge, .tooManyHeaders: 431
        case .bodyTooLarge: 413
        case .requestTimeout: 408
        }
    }

    /// `413 bodyTooLarge: …`, for logs.
    public var description: String { "\(status.code) \(kind.rawValue): \(message)" }
}
