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
