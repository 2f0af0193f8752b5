import HTTPServer

extension HTTPRequest {
    /// The method as written on the request line (`GET`).
    var methodName: String { method.rawValue }
}

extension HTTPHeaders {
    /// Headers from name/value pairs, in order.
    init(pairs: [(String, String)]) {
        self.init(pairs.map { (name: $0.0, value: $0.1) })
    }
}

/// `Content-Type: application/json; charset=utf-8`.
func jsonHeaders() -> HTTPHeaders { ["Content-Type": "application/json; charset=utf-8"] }

extension APIError {
    /// The API's answer to what the HTTP server answers by itself: a request its parser refused, a
    /// timeout, shutdown, a connection limit (the connection closes after it).
    init(_ rejection: HTTPRejection) {
        switch rejection.kind {
        case .bodyTooLarge:
            self.init(status: 413, code: "body_too_large", message: rejection.message)
        case .requestLineTooLong:
            self.init(status: 414, code: "uri_too_long", message: rejection.message)
        case .headerTooLarge, .tooManyHeaders:
            self.init(status: 431, code: "headers_too_large", message: rejection.message)
        case .unsupportedMethod, .unsupportedTransferCoding:
            self.init(status: 501, code: "not_implemented", message: rejection.message)
        case .unsupportedVersion:
            self.init(status: 505, code: "http_version_not_supported", message: rejection.message)
        case .requestTimeout:
            self.init(status: 408, code: "request_timeout", message: rejection.message)
        case .responseTimeout:
            self.init(status: 503, code: "response_timeout", message: rejection.message)
        case .shuttingDown:
            self.init(status: 503, code: "shutting_down", message: rejection.message)
        case .tooManyConnections:
            self.init(status: 503, code: "too_many_connections", message: rejection.message)
        case .notStored:
            self.init(status: 503, code: "storage_unavailable", message: rejection.message)
        case .noResponse:
            self.init(status: 500, code: "internal_error", message: rejection.message)
        default:
            self.init(status: 400, code: "bad_request", message: rejection.message)
        }
    }
}
