import Testing
import Tokens

/// A token minted by make-jwt-fixtures.py that must verify, and the claims it must give.
struct AcceptedFixture: Sendable, CustomTestStringConvertible {
    var name: String
    var token: String
    var sessions: [String]
    var rights: [String]
    var exp: Double
    var nbf: Double?
    var iat: Double?
    var sub: String?
    var testDescription: String { name }
}

/// A token minted by make-jwt-fixtures.py that must be refused, why, and a fragment of the message.
struct RefusedFixture: Sendable, CustomTestStringConvertible {
    var name: String
    var token: String
    var reason: JWTError.Reason
    var message: String
    var testDescription: String { name }
}
