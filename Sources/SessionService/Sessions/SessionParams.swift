import JSONCodec

/// A new session's parameters once checked against its reactor's parameter type: the JSON stored with the
/// session (as the type encodes them, so what is stored is what the reactor got) and the decoded value.
@usableFromInline
struct SessionParams: Sendable {
    /// The parameters as JSON; empty for a reactor that takes none.
    @usableFromInline var json: [UInt8]
    /// The decoded value, of the reactor's parameter type; nil for a reactor that takes none.
    @usableFromInline var value: (any Sendable)?

    @inlinable
    init(json: [UInt8], value: (any Sendable)?) {
        self.json = json
        self.value = value
    }

    /// The largest parameters, as JSON, a session may have: they ride in every snapshot of the session.
    @usableFromInline static let maxBytes = 64 << 10

    /// A reactor without parameters: `"params"` left out, null or `{}` is fine, anything else is refused.
    @usableFromInline
    static func none(for given: JSONValue?) throws(ParamsError) -> SessionParams {
        switch given {
        case nil, .null?: break
        case .object(let object)? where object.isEmpty: break
        case let other?:
            throw ParamsError(
                "this reactor takes no parameters; leave \"params\" out (got \(other.serializedString().prefix(80)))")
        }
        return SessionParams(json: [], value: nil)
    }

    /// Decodes `given` (left out or null: `{}`, so a type whose members are all optional needs none) as `P`.
    @usableFromInline
    static func decode<P: Codable & Sendable>(
        _ type: P.Type, from given: JSONValue?
    ) throws(ParamsError) -> SessionParams {
        let object: JSONValue
        switch given {
        case nil, .null?: object = .object(JSONObject())
        case .object?: object = given!
        case let other?:
            throw ParamsError("\"params\" must be a JSON object, got \(other.serializedString().prefix(80))")
        }
        let params: P
        do {
            params = try JSONValueDecoder().decode(P.self, from: object)
        } catch let error as JSONDecodingError {
            throw ParamsError("\"params\" do not decode: \(error.message)")
        } catch {
            throw ParamsError("\"params\" do not decode: \(error)")
        }
        let json: [UInt8]
        do {
            json = try JSONValueEncoder().encode(params)
        } catch {
            throw ParamsError("\"params\" decoded but do not encode again, so they cannot be stored: \(error)")
        }
        guard json.count <= maxBytes else {
            throw ParamsError("\"params\" are \(json.count) bytes of JSON; a session's parameters may be \(maxBytes)")
        }
        return SessionParams(json: json, value: params)
    }

    /// Decodes stored parameters (`{}` when none were stored) as `P`, for a session loaded back.
    @usableFromInline
    static func restore<P: Codable & Sendable>(
        _ type: P.Type, from json: [UInt8], reactor: String
    ) throws(RestoreError) -> P {
        do {
            return try JSONValueDecoder.stored.decode(P.self, from: json.isEmpty ? Array("{}".utf8) : json)
        } catch {
            throw RestoreError(
                reason: "its stored params do not decode as the parameters of reactor "
                    + "\(JSONWriter.quoted(reactor)): \(error)")
        }
    }
}

/// Why `"params"` of `POST /sessions` were refused (422 `invalid_params`); the message names the field.
@usableFromInline
struct ParamsError: Error, Sendable {
    @usableFromInline let message: String

    @usableFromInline
    init(_ message: String) { self.message = message }
}
