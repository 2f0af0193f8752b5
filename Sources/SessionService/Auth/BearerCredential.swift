import Foundation
import HTTPServer

/// The credential a request presents for a session: `Authorization: Bearer <token>`, or for clients
/// that cannot set headers (EventSource) the query parameter `access_token=<token>`. The header wins
/// when both are sent. Never logged.
enum BearerCredential {
    /// The presented token, or nil when there is none.
    static func presented(by request: HTTPRequest) -> String? {
        if let header = request.headers["Authorization"], let token = bearer(header) { return token }
        guard let query = request.queryValue("access_token"), !query.isEmpty else { return nil }
        return query
    }

    /// The token of an `Authorization` value with the `Bearer` scheme (case-insensitive, RFC 9110 §11.1).
    static func bearer(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        let token = trimmed.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
