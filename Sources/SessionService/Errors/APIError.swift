import JSONCodec

/// An error answer of the API: one ``Kind`` of the vocabulary (its status and code) and a message for
/// people, rendered as `{"error": {"code": "...", "message": "..."}}` (API.md). Messages name what was wrong.
///
/// ```swift
/// throw APIError(.invalidSelect, "select must be a JSON pointer such as /value (RFC 6901): \(error)")
/// ```
public struct APIError: Error, Sendable, Equatable {
    /// Which error it is: its status and code come from the vocabulary.
    public let kind: Kind
    /// The machine-readable code: the kind's, or the one a reactor's middleware refused with.
    public let code: String
    public var message: String
    /// Extra response headers (`Allow`, `WWW-Authenticate`).
    public var headers: [(String, String)] = []

    /// An error of `kind` explained by `message`.
    public init(_ kind: Kind, _ message: String, headers: [(String, String)] = []) {
        precondition(kind != .refusedByReactor, "a reactor's refusal carries its middleware's code: APIError(refusal:)")
        self.kind = kind
        code = kind.code
        self.message = message
        self.headers = headers
    }

    /// A refusal with the code a reactor's middleware gave it (``Kind/refusedByReactor``).
    init(refusedByReactorWith code: String, _ message: String) {
        kind = .refusedByReactor
        self.code = code
        self.message = message
    }

    /// The status it is answered with.
    public var status: Int { kind.status }

    public static func == (a: APIError, b: APIError) -> Bool {
        a.kind == b.kind && a.code == b.code && a.message == b.message
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
        APIError(.unknownSession, "no session with id \(JSONWriter.quoted(id)); create one with POST /sessions")
    }

    static func unknownReactor(_ name: String, known: [String]) -> APIError {
        APIError(
            .unknownReactor,
            "no reactor named \(JSONWriter.quoted(name)); this server hosts: \(known.joined(separator: ", "))")
    }

    @usableFromInline
    static func invalidJSON(_ detail: String) -> APIError {
        APIError(.invalidJSON, "the request body is not valid JSON: \(detail)")
    }

    static let unauthorized = APIError(
        .unauthorized, "admin endpoints need the header Authorization: Bearer <admin token>",
        headers: [("WWW-Authenticate", "Bearer realm=\"reactor-server admin\"")])

    static func unsupportedMediaType(_ contentType: String?) -> APIError {
        let got = contentType.map { " (got \(JSONWriter.quoted($0)))" } ?? " (no Content-Type was sent)"
        return APIError(.unsupportedMediaType, "send the body as Content-Type: application/json" + got)
    }

    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.bodyTooLarge, "the request body exceeds the limit of \(limit) bytes (http.maxBodyBytes)")
    }

    static func notFound(_ path: String) -> APIError {
        APIError(.notFound, "no route for \(path); see GET /openapi.json for every route")
    }

    static func notImplemented(_ method: String) -> APIError {
        APIError(
            .notImplemented,
            "no route of this server serves the method \(JSONWriter.quoted(method)); "
                + "see GET /openapi.json for every route")
    }

    static func methodNotAllowed(_ method: String, _ path: String, allowed: [String]) -> APIError {
        APIError(
            .methodNotAllowed, "\(method) is not allowed on \(path); allowed: \(allowed.joined(separator: ", "))",
            headers: [("Allow", allowed.joined(separator: ", "))])
    }

    static func tooManySubscribers(_ detail: String) -> APIError {
        APIError(.tooManySubscribers, "\(detail); try again later", headers: [("Retry-After", "5")])
    }

    @usableFromInline
    static func `internal`(_ detail: String) -> APIError {
        APIError(.internalError, "the server failed to handle the request: \(detail); the cause is logged")
    }
}
