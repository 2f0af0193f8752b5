import JSONCodec

extension JWTVerifier {
    /// The one algorithm accepted: HMAC-SHA256 (RFC 7518 §3.2).
    static let algorithm = "HS256"

    /// Refuses any header but an HS256 JWS header: the algorithm is fixed by the server, never chosen by the
    /// token (the `alg: none` and algorithm-confusion attacks), and nothing may ask for processing we do not do.
    static func checkHeader(_ header: JSONObject) throws(JWTError) {
        switch header["alg"] {
        case nil:
            throw JWTError(.algorithmNotAccepted, "the header has no alg; only HS256 is accepted")
        case .string(let alg)?:
            // Exact bytes: "hs256" and "HS256 " are other algorithms as far as RFC 7515 §4.1.1 is concerned.
            guard alg.utf8.elementsEqual(algorithm.utf8) else {
                throw JWTError(.algorithmNotAccepted, "alg \(algorithmName(alg)) is not accepted; only HS256")
            }
        case let other?:
            throw JWTError(.algorithmNotAccepted, "alg must be the string \"HS256\", not \(JWTClaims.kind(other))")
        }
        // RFC 7515 §4.1.11: a recipient that does not understand every listed extension must refuse the token.
        if header.contains(key: "crit") {
            throw JWTError(
                .headerNotAccepted,
                "the header has crit; no header extensions are understood here, so the token is refused")
        }
        // RFC 7797: an unencoded payload changes what is signed; it is only valid with crit, but refuse it outright.
        if header.contains(key: "b64") {
            throw JWTError(
                .headerNotAccepted, "the header has b64 (unencoded payload, RFC 7797), which is not supported")
        }
        switch header["typ"] {
        case nil:
            break
        case .string(let typ)?:
            // RFC 7519 §5.1: media type names compare case-insensitively.
            guard typ.utf8.count == 3, typ.uppercased() == "JWT" else {
                throw JWTError(
                    .headerNotAccepted, "typ \(UntrustedText.quote(typ)) is not accepted; leave typ out or use \"JWT\"")
            }
        case let other?:
            throw JWTError(.headerNotAccepted, "typ must be a string, not \(JWTClaims.kind(other))")
        }
    }

    /// `RS256` as it is when it looks like an algorithm name, else quoted or described.
    static func algorithmName(_ alg: String) -> String {
        let looksLikeName =
            !alg.isEmpty && alg.utf8.count <= 16
            && alg.utf8.allSatisfy { byte in
                SessionPattern.isIDByte(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
            }
        return looksLikeName ? alg : UntrustedText.quote(alg)
    }
}
