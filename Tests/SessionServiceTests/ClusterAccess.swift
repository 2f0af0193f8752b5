import Foundation
import ReactorServerTesting
import Synchronization
import Testing
import Tokens

/// The access mode a cluster load runs in, and what its clients present: nothing (`open`), each session's own
/// token (`token`), or one JWT with the `read`, `act` and `create` rights on every session (`jwt`).
enum ClusterAccess: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case open
    case token
    case jwt

    static let secret = "cluster-tests-jwt-secret-of-at-least-32-bytes"

    var testDescription: String { rawValue }

    /// The instances' settings for this mode.
    var settings: [(key: String, value: String)] {
        switch self {
        case .open: []
        case .token: [("auth.sessions", "token")]
        case .jwt: [("auth.sessions", "jwt"), ("auth.jwt.secret", Self.secret)]
        }
    }
}

/// The credentials of one cluster load: tokens as sessions are created, or the JWT.
final class ClusterCredentials: Sendable {
    let access: ClusterAccess
    private let tokens = Mutex<[String: String]>([:])
    private let jwt: String?

    init(_ access: ClusterAccess) throws {
        self.access = access
        guard access == .jwt else {
            jwt = nil
            return
        }
        // The instances are real processes on the real clock: valid for an hour from now.
        let now = Int64(Date().timeIntervalSince1970)
        let signer = JWTSigner(secret: try JWTSecret(bytes: Array(ClusterAccess.secret.utf8)))
        jwt = signer.sign(sessions: ["*"], rights: [.create, .read, .act], expiresAt: now + 3600)
    }

    /// Headers for creating a session.
    var creation: [(String, String)] { jwt.map { [("Authorization", "Bearer \($0)")] } ?? [] }

    /// Notes what creating session `id` answered (its token, in token mode).
    func created(_ id: String, _ answer: TestResponse) throws {
        guard access == .token else { return }
        let token = try #require(try answer.json()["token"] as? String, "no token for \(id): \(answer.text)")
        tokens.withLock { $0[id] = token }
    }

    /// Headers for a request on session `id`.
    func headers(_ id: String) -> [(String, String)] {
        switch access {
        case .open: []
        case .token: tokens.withLock { $0[id] }.map { [("Authorization", "Bearer \($0)")] } ?? []
        case .jwt: creation
        }
    }

    /// What a request on several sessions carries: headers, and `&access_token=t1,t2,…` in token mode.
    func multiplexed(_ ids: [String]) -> (headers: [(String, String)], query: String) {
        switch access {
        case .open: ([], "")
        case .token:
            ([], "&access_token=" + tokens.withLock { tokens in ids.map { tokens[$0] ?? "" } }.joined(separator: ","))
        case .jwt: (creation, "")
        }
    }
}
