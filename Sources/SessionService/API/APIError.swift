import JSONCodec

/// An error answer of the API: status, machine-readable code and a message for people, rendered as
/// `{"error": {"code": "...", "message": "..."}}` (API.md). Messages name what was wrong.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    /// Extra response headers (`Allow`, `WWW-Authenticate`).
    public var headers: [(String, String)] = []

    public init(status: Int, code: String, message: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static func == (a: APIError, b: APIError) -> Bool {
        a.status == b.status && a.code == b.code && a.message == b.message
    }

    /// The JSON body.
    public var body: [UInt8] {
        var out = JSONWriter()
        out.raw("{\"error\":{\"code\":")
        out.string(code)
        out.raw(",\"message\":")
        out.string(message)
        out.raw("}}")
        return out.bytes
    }

    static func unknownSession(_ id: String) -> APIError {
        APIError(status: 404, code: "unknown_session", message: "no session with id \(JSONWriter.quoted(id)); create one with POST /sessions")
    }

    static func unknownReactor(_ name: String, known: [String]) -> APIError {
        APIError(status: 404, code: "unknown_reactor", message: "no reactor named \(JSONWriter.quoted(name)); this server hosts: \(known.joined(separator: ", "))")
    }

    @usableFromInline
    static func invalidJSON(_ detail: String) -> APIError {
        APIError(status: 400, code: "invalid_json", message: "the request body is not valid JSON: \(detail)")
    }

    static let unauthorized = APIError(
        status: 401, code: "unauthorized",
        message: "admin endpoints need the header Authorization: Bearer <admin token>",
        headers: [("WWW-Authenticate", "Bearer realm=\"reactor-server admin\"")])

    static func unsupportedMediaType(_ contentType: String?) -> APIError {
        APIError(
            status: 415, code: "unsupported_media_type",
            message: "send the body as Content-Type: application/json" + (contentType.map { " (got \(JSONWriter.quoted($0)))" } ?? " (no Content-Type was sent)"))
    }

    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(status: 413, code: "body_too_large", message: "the request body exceeds the limit of \(limit) bytes (http.maxBodyBytes)")
    }

    static func notFound(_ path: String) -> APIError {
        APIError(status: 404, code: "not_found", message: "no route for \(path); see GET /openapi.json for every route")
    }

    static func notImplemented(_ method: String) -> APIError {
        APIError(status: 501, code: "not_implemented", message: "no route of this server serves the method \(JSONWriter.quoted(method)); see GET /openapi.json for every route")
    }

    static func methodNotAllowed(_ method: String, _ path: String, allowed: [String]) -> APIError {
        APIError(
            status: 405, code: "method_not_allowed", message: "\(method) is not allowed on \(path); allowed: \(allowed.joined(separator: ", "))",
            headers: [("Allow", allowed.joined(separator: ", "))])
    }

    static func tooManySubscribers(_ detail: String) -> APIError {
        APIError(status: 503, code: "too_many_subscribers", message: "\(detail); try again later", headers: [("Retry-After", "5")])
    }

    @usableFromInline
    static func `internal`(_ detail: String) -> APIError {
        APIError(status: 500, code: "internal_error", message: "the server failed to handle the request: \(detail); the cause is logged")
    }
}
