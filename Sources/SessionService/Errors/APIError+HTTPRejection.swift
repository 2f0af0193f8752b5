import HTTPServer

extension APIError {
    /// The API's answer to what the HTTP server answers by itself: a request its parser refused, a
    /// timeout, shutdown, a connection limit (the connection closes after it).
    init(_ rejection: HTTPRejection) {
        self.init(Kind(rejection.kind), rejection.message)
    }
}

extension APIError.Kind {
    /// The kind of each refusal of the HTTP server; its status is the one ``HTTPRejection/status`` gives
    /// (`APIErrorVocabularyTests` holds the two to each other).
    init(_ rejection: HTTPRejection.Kind) {
        switch rejection {
        case .malformedRequestLine, .malformedHeader, .invalidCharacter, .obsoleteLineFolding, .missingHost,
            .invalidHost, .conflictingFraming, .invalidContentLength, .invalidChunk, .invalidTransferEncoding:
            self = .badRequest
        case .bodyTooLarge: self = .bodyTooLarge
        case .requestLineTooLong: self = .uriTooLong
        case .headerTooLarge, .tooManyHeaders: self = .headersTooLarge
        case .unsupportedMethod, .unsupportedTransferCoding: self = .notImplemented
        case .unsupportedVersion: self = .httpVersionNotSupported
        case .requestTimeout: self = .requestTimeout
        case .responseTimeout: self = .responseTimeout
        case .shuttingDown: self = .shuttingDown
        case .tooManyConnections: self = .tooManyConnections
        case .notStored: self = .storageUnavailable
        case .noResponse: self = .internalError
        }
    }
}
