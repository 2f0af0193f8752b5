/// A response status: code and reason phrase.
public struct HTTPStatus: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The three-digit status code.
    public var code: Int
    /// The reason phrase on the status line.
    public var reasonPhrase: String

    /// A status with an explicit reason phrase.
    public init(code: Int, reasonPhrase: String) {
        self.code = code
        self.reasonPhrase = reasonPhrase
    }

    /// A status with the standard reason phrase for `code`.
    public init(code: Int) { self.init(code: code, reasonPhrase: Self.standardReason(code)) }

    /// `200`, `404`, … with the standard reason phrase.
    public init(integerLiteral value: Int) { self.init(code: value) }

    /// `404 Not Found`.
    public var description: String { "\(code) \(reasonPhrase)" }

    /// Whether a response with this status never has a body (1xx, 204, 304).
    var forbidsBody: Bool { Self.forbidsBody(code) }

    /// Whether a response with status `code` never has a body.
    static func forbidsBody(_ code: Int) -> Bool { (100..<200).contains(code) || code == 204 || code == 304 }

    /// 200 OK.
    public static let ok: HTTPStatus = 200
    /// 400 Bad Request.
    public static let badRequest: HTTPStatus = 400
    /// 404 Not Found.
    public static let notFound: HTTPStatus = 404

    /// The RFC 9110 reason phrase for `code` ("Unknown" for codes it does not name).
    public static func standardReason(_ code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }
}
