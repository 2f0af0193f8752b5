import Tokens

// A stream ends when the credential that opened it stops being valid (README "Access to sessions"):
// nothing is checked per event; the replacement of a token, or a JWT's deadline, finds its streams.
extension ReactorService {
    /// Has `stream` end (`unauthorized`) once the credential of the request that opened it lapses: in
    /// token mode when the token of one of `tokens` (each session's id and the stored hash its token
    /// matched) is replaced, that session's part; in jwt mode at the JWT's `exp` plus the leeway, all of it.
    func endWhenCredentialLapses(
        _ stream: any RevocableStream, tokens: [(id: String, matched: SessionTokenHash)], _ exchange: Exchange
    ) {
        switch access {
        case .open:
            return
        case .token:
            for (id, matched) in tokens {
                store.revocableStreams.register(stream, for: id, matched: matched)
                // A replacement between the access check and the registration did not find the stream.
                if store.accessTokenHash(for: id) != matched {
                    stream.revoke(id, message: SessionStore.tokenReplacedMessage)
                }
            }
        case .jwt(let verifier):
            guard let claims = exchange.claims else { return }
            let exp = Int64(exactly: claims.expiresAt.rounded(.down)).map(String.init) ?? "\(claims.expiresAt)"
            let leeway = verifier.leewaySeconds
            let message =
                "the bearer token expired (exp \(exp), auth.jwt.leewaySeconds \(leeway)); "
                + "open the stream again with a new token"
            expiringStreams.add(stream, endingAt: claims.expiresAt + Double(leeway), message: message)
        }
    }
}
