/// A complete response: status, headers and body. The server adds `Date`, `Content-Length`
/// and `Connection` unless the headers already carry them.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: HTTPStatus, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response (`text/plain; charset=utf-8`).
    public init(status: HTTPStatus, text: String) {
        self.init(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }
}
