/// A complete response: status, headers and body. The server adds `Date`, `Content-Length`
/// and `Connection` unless the headers already carry them.
public struct HTTPResponse: Sendable {
    /// Status code and reason phrase.
    public var status: HTTPStatus
    /// Header fields in order.
    public var headers: HTTPHeaders
    /// The body bytes (de-chunked for requests).
    public var body: [UInt8]

    /// A response from its parts.
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
