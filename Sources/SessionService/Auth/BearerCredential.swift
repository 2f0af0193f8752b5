import Foundation
import HTTPServer

/// The credential a request presents for a session: `Authorization: Bearer <token>`, or for clients
/// that cannot set headers (EventSource) the query parameter `access_token=<token>`. The header wins
/// when both are sent. Never logged.
enum BearerCredential {
    /// The presented token, or nil when there is none. `access_token` given again with another token is a
    /// credential that cannot be read: refused (401), not taken as the first of them.
    static func presented(by request: HTTPRequest) throws(APIError) -> String? {
        if let header = request.headers["Authorization"], let token = bearer(header) { return token }
        let queries = request.queryValues("access_token")
        guard let query = queries.first else { return nil }
        guard queries.allSatisfy({ $0 == query }) else {
            throw APIError(
                .unauthorized,
                "access_token is given \(queries.count) times with different tokens: give one",
                headers: APIError.sessionChallenge)
        }
        return query.isEmpty ? nil : query
    }

    /// The token of an `Authorization` value with the `Bearer` scheme (case-insensitive, RFC 9110 §11.1).
    static func bearer(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        let token = trimmed.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
