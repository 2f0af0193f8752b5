import Foundation
import Tokens

extension SessionAccessMode {
    /// The mode the configuration asks for; errors name the setting and never the secret.
    public static func from(_ auth: ServerConfiguration.Auth) throws(ConfigurationError) -> SessionAccessMode {
        switch Kind(rawValue: auth.sessions) {
        case .open?: return .open
        case .token?: return .token
        case .jwt?:
            let secret = try jwtSecret(auth.jwt)
            do {
                let verifier = try JWTVerifier(
                    secret: try JWTSecret(bytes: Array(secret.utf8)), leewaySeconds: auth.jwt.leewaySeconds,
                    audience: auth.jwt.audience.isEmpty ? nil : auth.jwt.audience)
                return .jwt(verifier)
            } catch {
                throw ConfigurationError("auth.jwt: \(error)")
            }
        case nil:
            throw ConfigurationError(
                "auth.sessions: expected open, token or jwt, got \(ConfigurationValue.quoted(auth.sessions))")
        }
    }

    /// `auth.jwt.secret` (or REACTOR_AUTH_JWT_SECRET), else the first line of `auth.jwt.secretFile`.
    static func jwtSecret(_ jwt: ServerConfiguration.Auth.JWT) throws(ConfigurationError) -> String {
        if !jwt.secret.isEmpty { return jwt.secret }
        guard !jwt.secretFile.isEmpty else {
            throw ConfigurationError(
                "auth.sessions is jwt but no secret is set: "
                    + "set REACTOR_AUTH_JWT_SECRET (at least 32 bytes, e.g. from `openssl rand -base64 48`), "
                    + "auth.jwt.secret or auth.jwt.secretFile"
            )
        }
        guard let data = FileManager.default.contents(atPath: jwt.secretFile) else {
            throw ConfigurationError("auth.jwt.secretFile: cannot read \(jwt.secretFile)")
        }
        let secret =
            String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map { String($0).trimmed }
            ?? ""
        guard !secret.isEmpty else {
            throw ConfigurationError("auth.jwt.secretFile: \(jwt.secretFile) holds no secret on its first line")
        }
        return secret
    }
}
