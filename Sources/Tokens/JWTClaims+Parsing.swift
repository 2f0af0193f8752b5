import JSONCodec

extension JWTClaims {
    /// The NumericDates accepted: from the epoch to the last second of year 9999 (RFC 7519 §2 allows
    /// fractions; anything outside this range is a minting bug, not a date).
    static let numericDateRange: ClosedRange<Double> = 0...253_402_300_799

    /// Reads and type-checks the claims of a payload whose signature has already matched.
    init(payload: JSONObject, audience: String?) throws(JWTError) {
        guard let exp = payload["exp"] else {
            throw JWTError(.missingClaim, "exp is required: the NumericDate (seconds since 1970) the token expires at")
        }
        expiresAt = try Self.numericDate(exp, named: "exp")
        notBefore = try payload["nbf"].map { value throws(JWTError) in try Self.numericDate(value, named: "nbf") }
        issuedAt = try payload["iat"].map { value throws(JWTError) in try Self.numericDate(value, named: "iat") }
        switch payload["sub"] {
        case nil: subject = nil
        case .string(let sub): subject = sub
        case let other?: throw JWTError(.invalidClaim, "sub must be a string, not \(Self.kind(other))")
        }
        sessions = try Self.sessions(payload["sessions"])
        rights = try Self.rights(payload["rights"])
        try Self.checkAudience(payload["aud"], expected: audience)
    }

    /// Refuses the claims when `now` (Unix seconds) is outside the times they name, give or take `leeway`.
    /// Each test is written to pass only when it holds, so a NaN clock refuses every token.
    func checkTimes(now: Double, leeway: Double) throws(JWTError) {
        let leewayText = "leeway \(UntrustedText.seconds(leeway)) s"
        // RFC 7519 §4.1.4: the current time must be before exp, so exp + leeway itself is already too late.
        guard now < expiresAt + leeway else {
            throw JWTError(
                .expired,
                "expired \(UntrustedText.seconds(now - expiresAt)) s ago "
                    + "(exp \(UntrustedText.seconds(expiresAt)), \(leewayText))"
            )
        }
        if let notBefore {
            guard now >= notBefore - leeway else {
                throw JWTError(
                    .notYetValid,
                    "not valid for another \(UntrustedText.seconds(notBefore - now)) s "
                        + "(nbf \(UntrustedText.seconds(notBefore)), \(leewayText))"
                )
            }
        }
        if let issuedAt {
            guard issuedAt <= now + leeway else {
                throw JWTError(
                    .issuedInTheFuture,
                    "issued \(UntrustedText.seconds(issuedAt - now)) s in the future "
                        + "(iat \(UntrustedText.seconds(issuedAt)), \(leewayText)); check the issuer's clock"
                )
            }
        }
    }

    static func numericDate(_ value: JSONValue, named name: String) throws(JWTError) -> Double {
        guard case .number(let number) = value else {
            throw JWTError(
                .invalidClaim, "\(name) must be a NumericDate (a number of seconds since 1970), not \(kind(value))")
        }
        let seconds = number.doubleValue
        guard numericDateRange.contains(seconds) else {
            throw JWTError(
                .invalidClaim,
                "\(name) \(number) is out of range (0 … \(Int64(numericDateRange.upperBound)), seconds since 1970)")
        }
        return seconds
    }

    static func sessions(_ value: JSONValue?) throws(JWTError) -> [SessionPattern] {
        guard let value else {
            throw JWTError(
                .missingClaim,
                "sessions is required: a list of session ids, "
                    + "where an entry ending in * is a prefix and \"*\" is every id"
            )
        }
        guard case .array(let entries) = value else {
            throw JWTError(.invalidClaim, "sessions must be an array of strings, not \(kind(value))")
        }
        var patterns: [SessionPattern] = []
        patterns.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            guard case .string(let text) = entry else {
                throw JWTError(.invalidClaim, "sessions[\(index)] must be a string, not \(kind(entry))")
            }
            do {
                patterns.append(try SessionPattern(claim: text))
            } catch {
                throw JWTError(
                    .invalidClaim,
                    "sessions[\(index)] \(error.problem): expected a session id, a prefix ending in *, or \"*\"")
            }
        }
        return patterns
    }

    static func rights(_ value: JSONValue?) throws(JWTError) -> Set<SessionRight> {
        var known: String { SessionRight.allCases.map(\.rawValue).joined(separator: ", ") }
        guard let value else { throw JWTError(.missingClaim, "rights is required: a list of any of \(known)") }
        guard case .array(let entries) = value else {
            throw JWTError(.invalidClaim, "rights must be an array of strings, not \(kind(value))")
        }
        var rights = Set<SessionRight>()
        for (index, entry) in entries.enumerated() {
            guard case .string(let text) = entry else {
                throw JWTError(.invalidClaim, "rights[\(index)] must be a string, not \(kind(entry))")
            }
            guard let right = SessionRight(rawValue: text) else {
                throw JWTError(
                    .invalidClaim,
                    "rights[\(index)] \(UntrustedText.quote(text)) is not a right; the rights are \(known)")
            }
            rights.insert(right)
        }
        return rights
    }

    /// RFC 7519 §4.1.3: a token naming an audience must be refused by anyone not named in it.
    static func checkAudience(_ value: JSONValue?, expected: String?) throws(JWTError) {
        let named: [String]
        switch value {
        case nil:
            guard let expected else { return }
            throw JWTError(.audienceNotAccepted, "aud is required and must name \(UntrustedText.quote(expected))")
        case .string(let one)?:
            named = [one]
        case .array(let entries)?:
            var strings: [String] = []
            for (index, entry) in entries.enumerated() {
                guard case .string(let text) = entry else {
                    throw JWTError(.invalidClaim, "aud[\(index)] must be a string, not \(kind(entry))")
                }
                strings.append(text)
            }
            named = strings
        case let other?:
            throw JWTError(.invalidClaim, "aud must be a string or an array of strings, not \(kind(other))")
        }
        guard let expected else {
            throw JWTError(
                .audienceNotAccepted,
                "the token names an audience (aud) but none is configured here; leave aud out or configure it")
        }
        guard named.contains(where: { $0.utf8.elementsEqual(expected.utf8) }) else {
            throw JWTError(.audienceNotAccepted, "aud does not name \(UntrustedText.quote(expected))")
        }
    }

    /// `a string`, `an array` …: the JSON type of a value, for messages.
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
